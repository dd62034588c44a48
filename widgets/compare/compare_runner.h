#pragma once
// "Run all strategies" on the Compare page: starts the real `shardscope-cli compare` (beside
// the GUI binary) as a QProcess with an argument list — the CLI validates, runs DDP, ZeRO-1/2/3
// and FSDP one after another through mpirun (or as threads of one worker process, --shared-device)
// with the same seed and --deterministic, and writes
// one JSON report into a private temporary folder, which is handed on through finished().
// The CLI, not the GUI, owns the launch logic, so GUI and CLI comparisons are the same runs.
#include <QProcess>
#include <QString>
#include <QWidget>
#include <memory>

class QCheckBox;
class QComboBox;
class QLabel;
class QPushButton;
class QSpinBox;
class QTemporaryDir;
class QTimer;

namespace shardscope::widgets {

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
    void readProgress();
    void onFinished(int exitCode, QProcess::ExitStatus status);
    void onError(QProcess::ProcessError error);
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
    QProcess* process_ = nullptr;
    QTimer* killTimer_;
    std::unique_ptr<QTemporaryDir> dir_;
    QString jsonPath_;
    QByteArray stdoutBuffer_;
    QByteArray stderr_;
    bool stopping_ = false;
    bool running_ = false; // from start() until the CLI has exited (the button is Stop meanwhile)
    int done_ = 0;         // strategies started so far (progress lines seen)
};

} // namespace shardscope::widgets
