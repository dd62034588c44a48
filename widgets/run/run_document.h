#pragma once
// The run a window shows: the session that produces it (a live job or an opened recording), the
// replay model its steps accumulate in, and the player every page follows. MainWindow owns one
// and hands it to each page, so pages share a playhead without knowing each other.
//
// Note: the document connects to its session before any page does, so when a page's slot for
// a session signal runs, the model already reflects it (reset on started / runInfoReady); new
// steps reach pages through stepsAppended, after they were appended.
#include "replay/replay_model.h"
#include "run/run_session.h"

#include <QObject>
#include <QString>
#include <vector>

namespace shardscope::widgets {

class ReplayPlayer;

class RunDocument : public QObject {
    Q_OBJECT
public:
    explicit RunDocument(QObject* parent = nullptr);
    ~RunDocument() override;

    RunSession& session() { return *session_; }
    const RunSession& session() const { return *session_; }
    const replay::ReplayModel& model() const { return model_; }
    ReplayPlayer& player() { return *player_; }
    const RunReportPtr& report() const { return report_; } // null until the run reports
    // Why the run's report did not read (it replays without one); empty when it read or none came.
    const QString& reportProblem() const { return reportProblem_; }
    const std::vector<replay::FailureInfo>& failures() const { return failures_; } // as received

Q_SIGNALS:
    // Steps were appended to the model; `steps` are the new ones.
    void stepsAppended(shardscope::widgets::StepListPtr steps);
    void reportUnreadable(const QString& reason);

private:
    void clear(const RunInfoPtr& info);

    RunSession* session_;
    replay::ReplayModel model_;
    ReplayPlayer* player_;
    RunReportPtr report_;
    QString reportProblem_;
    std::vector<replay::FailureInfo> failures_;
};

} // namespace shardscope::widgets
