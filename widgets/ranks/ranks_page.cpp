#include "ranks/ranks_page.h"

#include "common/byte_format.h"
#include "common/category_palette.h"
#include "common/palette_legend.h"
#include "common/qcustomplot.h"
#include "common/run_labels.h"
#include "common/side_column.h"
#include "common/theory_names.h"
#include "core/error.h"
#include "core/step_number.h"
#include "ranks/rank_ledger_view.h"
#include "ranks/run_theory_charts.h"
#include "ranks/run_timeline_charts.h"
#include "run/replay_player.h"
#include "run/run_config_panel.h"
#include "runconfig/config_json.h"

#include <QAction>
#include <QEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QShortcut>
#include <QSignalBlocker>
#include <QSlider>
#include <QSpinBox>
#include <QSplitter>
#include <QStyle>
#include <QTabWidget>
#include <QToolButton>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

namespace shardscope::widgets {

RunRequest RanksPage::defaultRequest() {
    RunRequest r; // RunRequest's defaults are the default scenario: small, 4 CPU ranks, ZeRO-3
    return r;
}

RanksPage::RanksPage(RunDocument& document, QWidget* parent)
    : QWidget(parent), document_(document), session_(&document.session()), model_(document.model()),
      player_(&document.player()) {
    setObjectName(QStringLiteral("ranksPage"));
    auto* split = new QSplitter(Qt::Horizontal, this);
    split->addWidget(buildLeft());
    split->addWidget(buildRight());
    split->setStretchFactor(1, 1);
    split->setSizes({330, 950});
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(split);

    // Escape stops a live job while this page is showing (the Stop button's shortcut).
    auto* escape = new QShortcut(QKeySequence(Qt::Key_Escape), this);
    escape->setObjectName(QStringLiteral("stopShortcut"));
    connect(escape, &QShortcut::activated, this, &RanksPage::stop);

    openAction_ = new QAction(this);
    openAction_->setShortcut(QKeySequence::Open);
    connect(openAction_, &QAction::triggered, this, &RanksPage::chooseRecording);
    connect(session_, &RunSession::started, this, &RanksPage::onStarted);
    connect(session_, &RunSession::runInfoReady, this, &RanksPage::onRunInfo);
    connect(&document_, &RunDocument::stepsAppended, this, &RanksPage::onSteps);
    connect(session_, &RunSession::reportReady, this, &RanksPage::onReport);
    connect(&document_, &RunDocument::reportUnreadable, this, [this] { comparisonTimer_.start(); });
    connect(session_, &RunSession::failureReceived, this, &RanksPage::onFailure);
    connect(session_, &RunSession::finished, this, &RanksPage::onFinished);
    connect(session_, &RunSession::stopRequested, this, &RanksPage::updateButtons);
    connect(player_, &ReplayPlayer::positionChanged, this, &RanksPage::onPosition);
    connect(player_, &ReplayPlayer::playingChanged, this, [this](bool playing) {
        playButton_->setIcon(
            style()->standardIcon(playing ? QStyle::SP_MediaPause : QStyle::SP_MediaPlay));
    });
    clockTimer_.setInterval(200);
    connect(&clockTimer_, &QTimer::timeout, this, &RanksPage::updateProgress);
    comparisonTimer_.setSingleShot(true);
    comparisonTimer_.setInterval(150);
    connect(&comparisonTimer_, &QTimer::timeout, this, &RanksPage::updateComparison);
    retranslateUi();
    updateButtons();
}

RanksPage::~RanksPage() = default;

bool RanksPage::runConfigured() {
    if (session_->isActive()) return false;
    if (const auto issues = config_->issues(); !issues.empty()) {
        showBanner(tr("Invalid settings: %1").arg(issues.front().message));
        return false;
    }
    plannedSteps_ = config_->request().steps;
    return session_->start(config_->request());
}

bool RanksPage::runRequest(const RunRequest& request) {
    config_->setRequest(request);
    return runConfigured();
}

bool RanksPage::runDefault() {
    return runRequest(defaultRequest());
}

bool RanksPage::openRecording(const QString& path) {
    if (session_->isActive()) return false;
    plannedSteps_ = 0;
    lastRecordingDir_ = QFileInfo(path).absolutePath();
    return session_->openRecording(path);
}

void RanksPage::setPresenting(bool on) {
    presentPane(split_, 0, on); // the rank view; a step outlining a chart gives that the room
    banner_->setVisible(!banner_->text().isEmpty() && !on);
    updateExposed(chartRank_->value());          // shown or kept hidden by what it says now
    updateSpeedLabel();                          // its short form on a projector
    position_->setWordWrap(on);                  // large text: a second line rather than a cut
    const QSignalBlocker quiet(settingsToggle_); // presentation put the column away, or back
    settingsToggle_->setChecked(!settingsColumn_->isHidden());
}

void RanksPage::stop() {
    if (!session_->canStop()) return;
    session_->stop();
    updateButtons();
    Q_EMIT statusMessage(tr("Stopping the job…"));
}

void RanksPage::chooseRecording() {
    if (session_->isActive()) return;
    const QString path =
        QFileDialog::getOpenFileName(this, tr("Open a recording"), lastRecordingDir_,
                                     tr("ShardScope recordings (*.sstrace);;All files (*)"));
    if (!path.isEmpty()) openRecording(path);
}

void RanksPage::onStarted(bool live) {
    live_ = live;
    settingsNote_.clear();
    updateSettingsTitle();
    if (!live) plannedSteps_ = 0; // a recording says in its handshake how many steps it has
    view_->clear();
    memory_->reset();
    loss_->reset();
    report_.reset();
    failure_.reset();
    scale_ = 0;
    banner_->setVisible(false);
    chartRank_->setValue(0);
    updateHeader();
    updateComparison();
    updateProgress();
    updateButtons();
    if (live) clockTimer_.start();
    const RunRequest request = config_->request();
    QString status = !live ? tr("Reading the recording…")
                     : request.threads
                         ? tr("Starting %1 ranks as threads of one process…").arg(request.ranks)
                         : tr("Starting %1 ranks…").arg(request.ranks);
    // A budget below the predicted peak was warned in the settings; the status repeats it.
    if (live && !config_->capacityWarning().isEmpty())
        status += QLatin1Char(' ') + config_->capacityWarning();
    Q_EMIT statusMessage(status);
}

void RanksPage::onRunInfo(const RunInfoPtr& info) {
    if (!live_) showRecordingSettings(*info);
    view_->setRunInfo(info);
    view_->setState(model_.emptyState());
    chartRank_->setRange(0, std::max(0, info->worldSize - 1));
    if (info->steps > 0) plannedSteps_ = info->steps;
    loss_->setStepsBefore(info->stepsBefore);
    scale_ = std::max<std::uint64_t>(view_->theoryTallest(), info->capacityBytes.value_or(0));
    view_->setScaleBytes(scale_ + scale_ / 10);
    updateHeader();
    updateProgress();
    comparisonTimer_.start();
    if (session_->canStop())
        Q_EMIT statusMessage(tr("Running on %n rank(s): step 1 of %1…", nullptr, info->worldSize)
                                 .arg(plannedSteps_));
}

// An opened recording's settings replace the previous run's in the panel (and with them the
// theory preview), so the panel describes what is loaded; Run then repeats that run.
void RanksPage::showRecordingSettings(const replay::RunInfo& info) {
    QString why;
    if (const auto request = requestFromConfigJson(info.configJson, &why)) {
        config_->setRequest(*request);
        settingsNote_.clear();
    } else {
        settingsNote_ = tr("The opened recording's settings cannot be shown here: %1. These are "
                           "the next run's.")
                            .arg(why);
    }
    updateSettingsTitle();
}

void RanksPage::onSteps(const StepListPtr& steps) {
    // The scale only grows, so bars never jump while a run streams in.
    // Each tier has its own bar: the tallest is the largest tier peak (the total without offload).
    for (const replay::RankState& s : steps->back()->endState)
        for (std::uint64_t peak : s.peakByTier)
            scale_ = std::max(scale_, peak);
    view_->setScaleBytes(scale_ + scale_ / 10);
    if (!speedTouched_ && model_.stepCount() == steps->size()) {
        const QSignalBlocker block(speed_);
        const double factor = ReplayPlayer::slowMotionFor(model_.step(0).durationNs);
        speed_->setValue(static_cast<int>(std::lround(std::log10(factor) * kSpeedSteps)));
        setSlowMotionFromSlider(speed_->value());
        player_->play(); // a newcomer sees motion without touching anything
    }
    memory_->appendSteps(*steps);
    loss_->appendSteps(*steps);
    if (session_->canStop()) {
        // A resumed run counts on from its checkpoint (core/step_number.h).
        const std::int64_t before = stepsBefore();
        const auto done = before + static_cast<std::int64_t>(model_.stepCount());
        const std::int64_t last = before + plannedSteps_;
        Q_EMIT statusMessage(last > done
                                 ? tr("Running: step %1 of %2 finished, step %3 in progress…")
                                       .arg(done)
                                       .arg(last)
                                       .arg(done + 1)
                                 : tr("Running: step %1 of %2 finished").arg(done).arg(last));
    }
    scrub_->setRange(0, static_cast<int>(std::min<std::uint64_t>(model_.eventCount(), INT32_MAX)));
    updateProgress();
    comparisonTimer_.start();
}

void RanksPage::onReport(const RunReportPtr& report) {
    report_ = report;
    comparisonTimer_.start();
}

void RanksPage::onFailure(const replay::FailureInfo& failure) {
    failure_ = failure;
    view_->setFailure(failure);
}

void RanksPage::onFinished(RunSession::Outcome outcome, const QString& message) {
    clockTimer_.stop();
    updateProgress();
    updateButtons();
    if (outcome == RunSession::Outcome::Failed) showBanner(message);
    if (model_.stepCount() > 0 && !player_->isPlaying() && !live_) player_->play();
    comparisonTimer_.start();
    Q_EMIT statusMessage(message);
    Q_EMIT runEnded(outcome, message);
}

void RanksPage::onPosition(std::uint64_t index) {
    view_->setState(player_->cursor().state());
    memory_->setCursorNs(player_->replayNs());
    if (!scrub_->isSliderDown()) {
        const QSignalBlocker block(scrub_);
        scrub_->setValue(static_cast<int>(std::min<std::uint64_t>(index, INT32_MAX)));
    }
    if (model_.stepCount() == 0) {
        position_->clear();
        return;
    }
    const std::size_t step = model_.stepIndexOf(index == 0 ? 0 : index - 1);
    position_->setText(tr("step %1 of %2 · event %3 of %4")
                           .arg(displayStep(static_cast<std::int64_t>(step), stepsBefore()))
                           .arg(stepsBefore() + static_cast<std::int64_t>(model_.stepCount()))
                           .arg(index)
                           .arg(model_.eventCount()));
    position_->setToolTip(position_->text());
    if (index >= model_.eventCount() && !session_->isActive()) player_->pause();
}

void RanksPage::showBanner(const QString& text) {
    banner_->setText(text);
    // On a projector the rank view's own line names the failure: its bars keep the height.
    banner_->setVisible(!text.isEmpty() && !isPresenting(banner_));
}

QString RanksPage::exposedText() const {
    return exposedLine_->text();
}

// The report's exposed communication per rank (median over the steps), and a CUDA rank's view
// of its GPU memory: shown once a run has finished or a recording has been read. A report that
// did not read says why here instead (the run still replays).
void RanksPage::updateExposed(int chartRank) {
    QStringList parts;
    if (!report_ && !document_.reportProblem().isEmpty())
        parts << tr("<b>Report unreadable</b> — %1. The steps replay without it.")
                     .arg(document_.reportProblem().toHtmlEscaped());
    if (report_) {
        std::vector<std::pair<int, double>> exposed;
        for (const report::RankReport& rr : report_->ranks)
            exposed.emplace_back(rr.rank, rr.exposedComm.fractionMedian);
        if (!exposed.empty()) {
            QStringList values;
            if (exposed.size() <= 8) {
                for (const auto& [rank, f] : exposed)
                    values << tr("rank %1 %2").arg(rank).arg(percentText(f));
            } else {
                const auto [lo, hi] = std::minmax_element(
                    exposed.begin(), exposed.end(),
                    [](const auto& a, const auto& b) { return a.second < b.second; });
                values << tr("least %1 (rank %2)").arg(percentText(lo->second)).arg(lo->first)
                       << tr("most %1 (rank %2)").arg(percentText(hi->second)).arg(hi->first);
                for (const auto& [rank, f] : exposed)
                    if (rank == chartRank) values << tr("rank %1 %2").arg(rank).arg(percentText(f));
            }
            // With transfers or the GPU estimate too, the figures stay on one or two lines at
            // 1024×700: the definitions are in the tooltip.
            const auto& info = document_.model().info();
            // CPU ranks over MPI wait far longer than GPUs would: said once, as an estimate (a
            // CUDA run measured its own).
            const QString gpu =
                info && info->backend == "cuda"
                    ? QString()
                    : gpuLinkEstimateText(*report_, chartRank, info ? info->tensorParallel : 1);
            const QString transfers = exposedTransferText(*report_);
            parts << (transfers.isEmpty() && gpu.isEmpty()
                          ? tr("<b>Exposed communication</b> (median share of a step waiting for "
                               "communication no compute hid): %1.")
                          : tr("<b>Exposed communication</b>: %1."))
                         .arg(values.join(QStringLiteral(" · ")));
            if (!transfers.isEmpty()) parts << transfers;
            if (!gpu.isEmpty()) parts << gpu;
        }
        for (const report::RankReport& rr : report_->ranks)
            if (rr.rank == chartRank && rr.device && !rr.device->name.empty())
                parts << tr("<b>GPU</b> %1 (rank %2): pool high-water %3, outside the ledger %4.")
                             .arg(QString::fromStdString(rr.device->name).toHtmlEscaped())
                             .arg(rr.rank)
                             .arg(
                                 formatDecimal(
                                     static_cast<double>(rr.device->poolReservedHighBytes)),
                                 formatDecimal(static_cast<double>(rr.device->outsideLedgerBytes)));
    }
    exposedLine_->setText(parts.join(QStringLiteral(" ")));
    exposedLine_->setToolTip(parts.isEmpty() || !report_
                                 ? QString()
                                 : QStringLiteral("<p>%1</p><p>%2</p><p>%3</p>")
                                       .arg(exposedCommExplanation().toHtmlEscaped(),
                                            exposedTransferExplanation().toHtmlEscaped(),
                                            gpuLinkEstimateExplanation().toHtmlEscaped()));
    exposedLine_->setVisible(!parts.isEmpty() && !isPresenting(exposedLine_));
}

QString RanksPage::settingsTitle() const {
    return settingsTitle_->text();
}

void RanksPage::updateSettingsTitle() {
    settingsTitle_->setText(!settingsNote_.isEmpty() ? settingsNote_
                            : model_.info() && !live_
                                ? tr("Settings of the opened recording (Run repeats it)")
                                : tr("Settings for the next run"));
}

QString RanksPage::bannerText() const {
    return banner_->isHidden() ? QString() : banner_->text();
}

void RanksPage::showPeakOfStep(std::size_t i) {
    if (i >= model_.stepCount()) return;
    player_->pause();
    player_->seek(model_.step(i).peakEvent);
    view_->settle();
}

void RanksPage::finishPendingDraws() {
    if (comparisonTimer_.isActive()) {
        comparisonTimer_.stop();
        updateComparison();
    }
    memory_->redrawNow();
    view_->settle();
}

void RanksPage::updateButtons() {
    const bool busy = session_->isActive();
    runButton_->setEnabled(!busy && config_->isValid());
    stopButton_->setEnabled(session_->canStop());
    openButton_->setEnabled(!busy);
    openAction_->setEnabled(!busy);
    config_->setEnabled(!busy);
}

void RanksPage::updateProgress() {
    const int have = static_cast<int>(model_.stepCount());
    progress_->setRange(0,
                        static_cast<int>(std::max<std::int64_t>(plannedSteps_, std::max(have, 1))));
    // Finished steps, not arrived ones: a step cut short by a failure is the step it failed in
    // (1-based, as the banner says), not one more done.
    const auto done = std::count_if(model_.steps().begin(), model_.steps().end(),
                                    [](const replay::StepPtr& s) { return s->complete; });
    progress_->setValue(static_cast<int>(done));
    const std::int64_t before = stepsBefore();
    progress_->setFormat(
        before > 0 && plannedSteps_ > 0 ? tr("%1 of %2 steps done, resumed after step %3")
                                              .arg(done)
                                              .arg(plannedSteps_)
                                              .arg(before)
        : plannedSteps_ > 0 ? tr("%1 of %2 steps done").arg(done).arg(plannedSteps_)
                            : tr("%1 steps done").arg(done));
    elapsed_->setText(session_->isLive() || live_
                          ? tr("%1 s").arg(session_->elapsedSeconds(), 0, 'f', 1)
                          : QString());
}

void RanksPage::updateHeader() {
    const replay::RunInfo* info = model_.info().get();
    if (!info) {
        title_->setText(tr("Ranks: what every rank holds, step by step"));
        story_->setText(tr("Press <b>Run</b> to train real sharded steps of a small GPT on CPU "
                           "ranks (OpenMPI processes, or threads "
                           "of one process), or open a recording."));
        title_->setToolTip(QString());
        savingsLine_->clear();
        return;
    }
    const auto strategy = strategyFromName(info->strategy);
    QStringList details{QString::fromStdString(info->precision)};
    if (info->backend == "cuda") details << tr("CUDA");
    if (info->sharedDevice) details << tr("threads");
    if (info->pipeParallel > 1)
        details << tr("%1 pipeline stages").arg(info->pipeParallel); // P ≥ 2
    if (info->tensorParallel > 1) details << tr("TP %1").arg(info->tensorParallel);
    if (info->stepsBefore > 0) details << tr("resumed after step %1").arg(info->stepsBefore);
    const QString how = details.join(QStringLiteral(", "));
    title_->setText(
        tr("%1 on %2 ranks · model %3 (Ψ = %4, %5)")
            .arg(strategy ? strategyLabel(*strategy) : QString::fromStdString(info->strategy))
            .arg(info->worldSize)
            .arg(QString::fromStdString(info->model),
                 formatCount(static_cast<double>(info->paramCount)), how));
    // The shard group of fsdp_hybrid, as the run's configuration has it.
    int hybridGroup = 0;
    try {
        hybridGroup =
            runconfig::configFromJson(nlohmann::json::parse(info->configJson, nullptr, false))
                .knobs.hybridGroupSize;
    } catch (const Error&) {
        hybridGroup = 0; // a configuration this build cannot read: the story without the group
    }
    // The strategy shards over the data-parallel ranks D = N / (P·T), not the world.
    const int dataRanks =
        std::max(1, info->worldSize / (info->tensorParallel * info->pipeParallel));
    story_->setText(strategy ? strategyStory(*strategy, dataRanks, hybridGroup) : QString());
    title_->setToolTip(info->sharedDevice
                           ? tr("The ranks ran as threads of one shardscope-worker process "
                                "(--shared-device), not as mpirun processes.")
                           : QString());
}

std::int64_t RanksPage::stepsBefore() const {
    return model_.info() ? model_.info()->stepsBefore : 0;
}

void RanksPage::updateComparison() {
    TheoryComparison c;
    c.info = model_.info();
    c.rank = chartRank_->value();
    const auto r = static_cast<std::size_t>(c.rank);
    if (model_.stepCount() > 0 && r < model_.steps().back()->endState.size()) {
        const replay::RankState& end = model_.steps().back()->endState[r];
        for (Category cat : kAllCategories)
            c.measuredStates[index(cat)] = end.live.category(cat);
        c.measuredPeak = end.peakTotal;
    }
    if (report_) {
        for (const report::RankReport& rr : report_->ranks)
            if (rr.rank == c.rank) {
                c.measuredStates = rr.modelStateBytes;
                c.fromReport = true;
            }
    }
    for (Category cat : kAllCategories)
        if (stateGroup(cat) == StateGroup::Other) c.measuredStates[index(cat)] = 0;
    updateExposed(c.rank);
    measured_->setComparison(c);
    savings_->setComparison(c);
    updateTierTooltip(c.rank);
    const auto measured = savings_->measuredSavings();
    if (!c.info || !measured) {
        savingsLine_->clear();
        return;
    }
    const auto ddp = ddpModelStates(*c.info, c.rank);
    const auto theoryOfRank = c.info->theoryModelStatesOf(c.rank);
    const std::uint64_t theoryStates = theoryOfRank ? modelStateTotal(*theoryOfRank) : 0;
    if (strategyFromName(c.info->strategy) ==
        plan::Strategy::Ddp) { // the baseline saves nothing against itself
        savingsLine_->setText(
            tr("<b>Model states per rank: %1 measured</b> (theory %2): DDP is the baseline, every "
               "rank holds "
               "everything; the sharded strategies are measured against it. Peak on rank %3: %4.")
                .arg(formatDecimal(static_cast<double>(modelStateTotal(c.measuredStates))),
                     formatDecimal(static_cast<double>(theoryStates)))
                .arg(c.rank)
                .arg(formatDecimal(static_cast<double>(c.measuredPeak))));
        return;
    }
    QString text = tr("<b>Model states per rank: %1 measured</b> (theory %2) vs %3 with DDP → "
                      "<b>%4× less memory</b>"
                      " (theory %5×). Peak on rank %6: %7.")
                       .arg(formatDecimal(static_cast<double>(modelStateTotal(c.measuredStates))),
                            formatDecimal(static_cast<double>(theoryStates)),
                            formatDecimal(static_cast<double>(ddp.value_or(0))))
                       .arg(*measured, 0, 'f', 2)
                       .arg(savings_->theorySavings().value_or(0), 0, 'f', 2)
                       .arg(c.rank);
    // With offload the rank's peak spans memories; the device's is the one the budget limits (the
    // tooltip has every tier's).
    const auto focus = static_cast<std::size_t>(c.rank);
    if (view_->shownTiers().size() >= 2 && model_.stepCount() > 0 &&
        focus < model_.steps().back()->endState.size())
        text = text.arg(
            tr("%1 on the device")
                .arg(formatDecimal(static_cast<double>(
                    model_.steps().back()->endState[focus].peakByTier[index(Tier::Device)]))));
    else
        text = text.arg(formatDecimal(static_cast<double>(c.measuredPeak)));
    savingsLine_->setText(text);
}

// With offload the rank's bytes live in more than one memory: each one's peak, and that the
// capacity budget is the device's alone (the bars show the model states per tier).
void RanksPage::updateTierTooltip(int rank) {
    const auto r = static_cast<std::size_t>(rank);
    savingsLine_->setToolTip(QString());
    if (view_->shownTiers().size() < 2 || model_.stepCount() == 0 ||
        r >= model_.steps().back()->endState.size())
        return;
    const replay::RankState& end = model_.steps().back()->endState[r];
    QStringList parts;
    for (Tier t : view_->shownTiers())
        parts << tierLabel(t) + QLatin1Char(' ') +
                     (formatDecimal(static_cast<double>(end.peakByTier[index(t)])));
    QString text = tr("Peak by tier: %1.").arg(parts.join(QStringLiteral(", ")));
    if (const replay::RunInfo* info = model_.info().get(); info && info->capacityBytes)
        text = tr("Peak by tier: %1; the budget is the device's.")
                   .arg(parts.join(QStringLiteral(", ")));
    // A tooltip, not more text: at 1024×700 another line would come out of the bars' height.
    savingsLine_->setToolTip(text);
}

void RanksPage::setSlowMotionFromSlider(int value) {
    player_->setSlowMotion(std::pow(10.0, static_cast<double>(value) / kSpeedSteps));
    updateSpeedLabel();
}

void RanksPage::updateSpeedLabel() {
    const double f = player_->slowMotion();
    const double stepSeconds =
        model_.stepCount() > 0 ? static_cast<double>(model_.step(0).durationNs) * f / 1e9 : 0;
    const QString whole =
        stepSeconds > 0
            ? tr("slow motion %1× (a step ≈ %2 s)").arg(f, 0, 'f', 0).arg(stepSeconds, 0, 'f', 1)
            : tr("slow motion %1×").arg(f, 0, 'f', 0);
    // On a projector the short form: a second line would come out of the bars' height.
    speedLabel_->setText(isPresenting(speedLabel_) ? tr("slow motion %1×").arg(f, 0, 'f', 0)
                                                   : whole);
    speedLabel_->setToolTip(whole); // the label may be cut at small widths
}

void RanksPage::changeEvent(QEvent* event) {
    if (event->type() == QEvent::LanguageChange) retranslateUi();
    QWidget::changeEvent(event);
}

void RanksPage::retranslateUi() {
    updateSettingsTitle();
    settingsToggle_->setText(tr("Settings"));
    settingsToggle_->setToolTip(tr("Show or fold away the run settings"));
    runButton_->setText(tr("Run"));
    stopButton_->setText(tr("Stop"));
    stopButton_->setToolTip(tr("Stop the job and every process it started (Esc)"));
    openButton_->setText(tr("Open recording…"));
    openAction_->setText(tr("&Open recording…"));
    playButton_->setToolTip(tr("Play / pause the replay"));
    scrub_->setToolTip(tr("Scrub through every event of the run"));
    speed_->setToolTip(tr("Replay speed: steps take milliseconds on real hardware; slow motion "
                          "makes them watchable"));
    rankLabel_->setText(tr("Charts for rank:"));
    timeTabs_->setTabText(0, tr("Memory over time"));
    timeTabs_->setTabText(1, tr("Loss"));
    theoryTabs_->setTabText(0, tr("Measured vs theory"));
    theoryTabs_->setTabText(1, tr("Savings vs DDP"));
    updateHeader();
    updateProgress();
    updateSpeedLabel();
    comparisonTimer_.start();
    onPosition(player_->cursor().index());
}

} // namespace shardscope::widgets
