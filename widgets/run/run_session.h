#pragma once
// One job or one recording at a time, as the GUI sees it. A live run is `shardscope-cli run …
// --stream SOCKET` under the GUI's one supervisor (CliProcess: private folder, --ending, Stop):
// the CLI supervises the job (launch::Job: mpirun or, with RunRequest::threads, the worker
// alone) and forwards its event stream to the socket in the supervisor's folder, decoded on a
// QThread (StreamReceiver). The CLI's typed ending (launch::JobEnding) becomes
// finished(outcome, one translated line); the session is reusable.
#include "launch/ending.h"
#include "report/report.h"
#include "run/cli_process.h"
#include "run/run_request.h"
#include "run/stream_receiver.h"

#include <QElapsedTimer>
#include <QObject>
#include <QThread>
#include <QTimer>
#include <optional>
#include <utility>

namespace shardscope::widgets {

class RunSession : public QObject {
    Q_OBJECT
public:
    enum class Outcome { Completed, Stopped, Failed };
    Q_ENUM(Outcome)

    explicit RunSession(QObject* parent = nullptr);
    ~RunSession() override; // tears down a running job: no orphans

    // Defaults: shardscope-cli and shardscope-worker beside this binary, mpirun on PATH.
    void setCliPath(const QString& path) { cliPath_ = path; }
    QString cliPath() const { return cliPath_; }
    void setWorkerPath(const QString& path) { workerPath_ = path; }
    QString workerPath() const { return workerPath_; }
    void setMpirun(const QString& nameOrPath) { mpirun_ = nameOrPath; }

    bool isActive() const { return active_; }
    bool isLive() const { return active_ && live_; }
    // A live job is running and stop() would end it (from started(true) until finished()).
    bool canStop() const { return isLive() && !processExited_ && !cli_->stopRequested(); }
    qint64 processId() const; // the supervising shardscope-cli's pid while running, else 0
    bool isDirect() const { return direct_; } // the last live run started the worker without mpirun
    // How the last live run ended, as the CLI classified it (none: it never got that far).
    const std::optional<launch::JobEnding>& lastEnding() const { return cli_->ending(); }
    double elapsedSeconds() const;
    // Why the last stream or recording could not be read to its end (empty if it could).
    QString streamError() const { return streamError_; }
    QString recordingPath() const {
        return recordingPath_;
    } // the file opened last (empty for live runs)

    // Both return false (and emit finished(Failed, reason)) when nothing could be started.
    bool start(const RunRequest& request);
    // The listing of the configuration File → Import configuration… applied last, and the
    // settings it left in the panel: every later run hands it to shardscope-cli run
    // (--config-import), which carries it into the run's report and notes — with the keys whose
    // settings were changed since listed as such (importListingFor).
    void setConfigImport(const report::ConfigImport& listing, const RunRequest& afterImport);
    std::optional<report::ConfigImport> importListingFor(const RunRequest& request) const;
    bool openRecording(const QString& path);
    // SIGTERM to the CLI, which tears the job down; its tree killed after kGraceMs as the last
    // resort (CliProcess::stop).
    void stop();

    // The ending in the user's language, from its typed fields.
    static QString endingText(const launch::JobEnding& ending);
    // The ending's cause names what happened, not only how a process exited ("exited (…)").
    static bool hasNamedCause(const launch::JobEnding& ending);

    static constexpr int kGraceMs = CliProcess::kGraceMs;
    static constexpr int kDrainMs =
        2000; // after the CLI exits, wait this long for the stream's tail

Q_SIGNALS:
    void started(bool live);
    void runInfoReady(shardscope::widgets::RunInfoPtr info);
    void stepsReady(shardscope::widgets::StepListPtr steps);
    void reportReady(shardscope::widgets::RunReportPtr report);
    void reportUnreadable(const QString& reason); // the run replays without its report
    void failureReceived(shardscope::replay::FailureInfo failure);
    void finished(shardscope::widgets::RunSession::Outcome outcome, const QString& message);
    void stopRequested(); // stop() asked the job to end (every page greys its Stop)

private:
    bool refuse(const QString& message);
    void beginSession(bool live);
    void onSteps(const StepListPtr& steps);
    void onCliFinished();
    void onStreamError(const QString& message);
    void finishLive();
    void finishRecording();
    QString liveFailureMessage();
    void cleanup(Outcome outcome, const QString& message);

    QString cliPath_;
    QString workerPath_;
    QString mpirun_ = QStringLiteral("mpirun");
    QThread thread_;
    StreamReceiver* receiver_ = nullptr; // lives on thread_
    CliProcess* cli_ = nullptr;
    std::optional<std::pair<report::ConfigImport, RunRequest>> configImport_;
    QTimer drainTimer_;
    QElapsedTimer clock_;
    QString recordingPath_;
    QString streamError_;
    std::optional<replay::FailureInfo> failure_;
    int completeSteps_ = 0;
    std::int64_t stepsBefore_ = 0; // the run's handshake: a resumed run's steps before it
    bool direct_ = false;
    bool active_ = false;
    bool live_ = false;
    bool streamOpen_ = false;
    bool streamEnded_ = false;
    bool processExited_ = false;
    bool userStopped_ = false; // stop() ended the run (not an unreadable stream)
};

} // namespace shardscope::widgets
