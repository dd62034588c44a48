#include "run/run_document.h"

#include "run/replay_player.h"

namespace shardscope::widgets {

RunDocument::RunDocument(QObject* parent)
    : QObject(parent), session_(new RunSession(this)), player_(new ReplayPlayer(model_, this)) {
    connect(session_, &RunSession::started, this, [this] {
        clear(nullptr);
        report_.reset();
        reportProblem_.clear();
        failures_.clear();
    });
    connect(session_, &RunSession::runInfoReady, this,
            [this](const RunInfoPtr& info) { clear(info); });
    connect(session_, &RunSession::stepsReady, this, [this](const StepListPtr& steps) {
        if (!model_.info() || !steps || steps->empty()) return;
        model_.append(*steps);
        Q_EMIT stepsAppended(steps);
    });
    connect(session_, &RunSession::reportReady, this,
            [this](const RunReportPtr& report) { report_ = report; });
    connect(session_, &RunSession::reportUnreadable, this, [this](const QString& reason) {
        reportProblem_ = reason;
        Q_EMIT reportUnreadable(reason);
    });
    connect(session_, &RunSession::failureReceived, this,
            [this](const replay::FailureInfo& f) { failures_.push_back(f); });
}

RunDocument::~RunDocument() = default;

void RunDocument::clear(const RunInfoPtr& info) {
    model_.reset(info);
    player_->reset();
}

} // namespace shardscope::widgets
