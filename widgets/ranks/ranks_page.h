#pragma once
// The Ranks page: runs a real job (or opens a recording) and replays every rank's ledger in
// slow motion next to the theory. Settings on the left; on the right the run's story and
// savings, run controls with progress, an inline error banner, the rank view with replay
// controls, and the charts. The data (session, ReplayModel, player) is the window's RunDocument;
// the page's widgets only draw it.
#include "replay/replay_model.h"
#include "run/run_document.h"

#include <QTimer>
#include <QWidget>
#include <optional>

class QAction;
class QLabel;
class QProgressBar;
class QPushButton;
class QSlider;
class QSpinBox;
class QSplitter;
class QTabWidget;
class QToolButton;

namespace shardscope::widgets {

class LossChart;
class MeasuredVsTheoryChart;
class MemoryTimelineChart;
class RankLedgerView;
class ReplayPlayer;
class RunConfigPanel;
class SavingsChart;

class RanksPage : public QWidget {
    Q_OBJECT
public:
    explicit RanksPage(RunDocument& document, QWidget* parent = nullptr);
    ~RanksPage() override;

    // Starts the configured run / the default scenario (small, 4 CPU ranks, ZeRO-3).
    bool runConfigured();
    bool runRequest(const RunRequest& request); // shows it in the settings, then runs it
    bool runDefault();
    bool openRecording(const QString& path);
    void stop();
    QAction* openAction() const { return openAction_; }
    // Presentation mode: the rank view takes the height the charts under it had (a lesson step
    // that outlines a chart gives that chart the room instead; the handle drags them back).
    void setPresenting(bool on);

    // Shows the moment of step i (0-based in arrival order) with the highest rank total, settled:
    // what a still picture should show (units gathered, activations live).
    void showPeakOfStep(std::size_t i);
    void finishPendingDraws(); // coalesced redraws run now (screenshots)

    RunDocument& document() { return document_; }
    RunSession& session() { return *session_; }
    const replay::ReplayModel& model() const { return model_; }
    ReplayPlayer& player() { return *player_; }
    RankLedgerView* rankView() const { return view_; }
    RunConfigPanel* configPanel() const { return config_; }
    SavingsChart* savingsChart() const { return savings_; }
    MeasuredVsTheoryChart* measuredChart() const { return measured_; }
    MemoryTimelineChart* memoryChart() const { return memory_; }
    LossChart* lossChart() const { return loss_; }
    QString bannerText() const;
    QString settingsTitle() const;
    QString exposedText() const; // the exposed-communication summary of the finished run, or empty
    bool isBusy() const { return session_->isActive(); }

    static RunRequest defaultRequest();

Q_SIGNALS:
    void statusMessage(const QString& message);
    void runEnded(shardscope::widgets::RunSession::Outcome outcome, const QString& message);

protected:
    void changeEvent(QEvent* event) override;

private:
    static constexpr int kSpeedSteps = 10; // speed slider ticks per factor of ten
    QWidget* buildLeft();
    QWidget* buildRight();
    QWidget* buildControls();
    QWidget* buildCharts();
    void onStarted(bool live);
    void onRunInfo(const RunInfoPtr& info);
    void onSteps(const StepListPtr& steps); // after the document appended them
    void showRecordingSettings(const replay::RunInfo& info);
    void updateSettingsTitle();
    void onReport(const RunReportPtr& report);
    void onFailure(const replay::FailureInfo& failure);
    void onFinished(RunSession::Outcome outcome, const QString& message);
    void onPosition(std::uint64_t index);
    void showBanner(const QString& text);
    void updateButtons();
    void updateHeader();
    void updateComparison();
    void updateTierTooltip(int rank); // the savings line's tooltip: each tier's peak
    void updateExposed(int chartRank);
    std::int64_t stepsBefore() const; // a resumed run's (0: a fresh run)
    void updateProgress();
    void updateSpeedLabel();
    void setSlowMotionFromSlider(int value);
    void chooseRecording();
    void retranslateUi();

    RunDocument& document_;
    RunSession* session_;
    const replay::ReplayModel& model_;
    ReplayPlayer* player_;
    RunConfigPanel* config_ = nullptr;
    RankLedgerView* view_ = nullptr;
    QLabel* title_ = nullptr;
    QLabel* story_ = nullptr;
    QLabel* savingsLine_ = nullptr;
    QLabel* exposedLine_ = nullptr;
    QLabel* banner_ = nullptr;
    QLabel* settingsTitle_ = nullptr;
    QPushButton* runButton_ = nullptr;
    QPushButton* stopButton_ = nullptr;
    QPushButton* openButton_ = nullptr;
    QProgressBar* progress_ = nullptr;
    QLabel* elapsed_ = nullptr;
    QToolButton* playButton_ = nullptr;
    QSlider* scrub_ = nullptr;
    QSlider* speed_ = nullptr;
    QLabel* position_ = nullptr;
    QLabel* speedLabel_ = nullptr;
    QLabel* rankLabel_ = nullptr;
    QSpinBox* chartRank_ = nullptr;
    QSplitter* split_ = nullptr; // the rank view over the charts
    QWidget* settingsColumn_ = nullptr;
    QToolButton* settingsToggle_ = nullptr;
    QTabWidget* timeTabs_ = nullptr;
    QTabWidget* theoryTabs_ = nullptr;
    MemoryTimelineChart* memory_ = nullptr;
    LossChart* loss_ = nullptr;
    MeasuredVsTheoryChart* measured_ = nullptr;
    SavingsChart* savings_ = nullptr;
    QAction* openAction_ = nullptr;
    QTimer clockTimer_;
    QTimer comparisonTimer_;
    RunReportPtr report_;
    std::optional<replay::FailureInfo> failure_;
    std::int64_t plannedSteps_ = 0;
    std::uint64_t scale_ = 0;
    bool speedTouched_ = false;
    bool live_ = false;
    QString lastRecordingDir_;
    QString settingsNote_; // why the panel could not show the opened recording's settings
};

} // namespace shardscope::widgets
