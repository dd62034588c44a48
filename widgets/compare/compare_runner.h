#pragma once
// "Run all strategies" on the Compare page: the real `shardscope-cli compare` (beside the GUI
// binary) under the GUI's one supervisor (CliProcess: private folder, typed ending, JSON progress,
// Stop tears the tree down) — the CLI validates, runs the classic strategies (DDP first) one after
// another through mpirun (or as threads of one worker process, --shared-device) with the same
// seed and --deterministic, and writes one JSON report into the supervisor's folder, which is
// handed on through finished(). The CLI, not the GUI, owns the launch logic, so GUI and CLI
// comparisons are the same runs.
#include <QJsonObject>
#include <QString>
#include <QWidget>

class QCheckBox;
class QComboBox;
class QLabel;
class QPushButton;
class QSpinBox;

namespace shardscope::widgets {

class CliProcess;

class CompareRunner : public QWidget {
    Q_OBJECT
public:
    explicit CompareRunner(QWidget* parent = nullptr);
    ~CompareRunner() override;

    // Default: QCoreApplication::applicationDirPath() + "/shardscope-cli"; tests point it
    // elsewhere.
    void setCliPath(const QString& path) { cliPath_ = path; }
    QString cliPath() const { return cliPath_; }
    void setRanks(int ranks);
    void setModel(const QString& preset);
    void setSteps(int steps);
    // Ranks as threads of one worker process (compare --shared-device): no mpirun. Ticked and
    // locked when mpirun cannot run here (mpiUnavailableReason()).
    void setThreads(bool threads);
    bool threads() const;
    void setMpiUnavailable(const QString& reason);

    void start();
    void stop();
    bool isRunning() const;
    qint64 processId() const; // the shardscope-cli compare's pid while it runs, else 0
    QString runButtonText() const;
    QString progressText() const;
    QString errorText() const; // empty while hidden

    // The CLI's argument list for the current settings (without the program).
    QStringList arguments(const QString& jsonPath) const;

Q_SIGNALS:
    // The CLI's compare JSON (utf-8), after a successful run.
    void finished(const QByteArray& json);
    void statusMessage(const QString& message);

protected:
    void changeEvent(QEvent* event) override;

private:
    void onProgress(const QJsonObject& event);
    void onFinished();
    void showError(const QString& text);
    void setRunning(bool running);
    void retranslateUi();

    QString cliPath_;
    QLabel* title_;
    QLabel* ranksLabel_;
    QLabel* modelLabel_;
    QLabel* stepsLabel_;
    QSpinBox* ranks_;
    QComboBox* model_;
    QSpinBox* steps_;
    QCheckBox* threads_;
    QString mpiUnavailable_;
    QPushButton* run_;
    QLabel* tpLabel_;
    QSpinBox* tp_; // --tp: every strategy on the same T × D mesh
    QLabel* progress_;
    QLabel* error_;
    CliProcess* cli_;
    QString jsonPath_;
    bool running_ = false; // from start() until the CLI has exited (the button is Stop meanwhile)
    int jobs_ = 0;         // strategies the comparison runs (from its progress)
};

} // namespace shardscope::widgets
