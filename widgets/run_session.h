#pragma once
// One job or one recording at a time, as the GUI sees it. A live run is `mpirun … -np N
// shardscope-worker …` (launch::mpirunArgv, a QProcess with an argument list), or with
// RunRequest::threads the worker alone (`shardscope-worker … --shared-device --ranks N`, every
// rank a thread of that one process), streaming to a private local socket; the stream is decoded on a QThread (StreamReceiver). Every way a run
// can end becomes finished(outcome, one translated line); the session is reusable afterwards.
#include <QElapsedTimer>
#include <QObject>
#include <QPointer>
#include <QProcess>
#include <QThread>
#include <QTimer>
#include <memory>

#include "process_tree.h"
#include "run/stream_receiver.h"
#include "run_request.h"

class QTemporaryDir;

namespace shardscope::widgets {

class RunSession : public QObject {
    Q_OBJECT
public:
    enum class Outcome { Completed, Stopped, Failed };
    Q_ENUM(Outcome)

    explicit RunSession(QObject* parent = nullptr);
    ~RunSession() override; // tears down a running job: no orphans

    // Defaults: shardscope-worker beside this binary, mpirun on PATH.
    void setWorkerPath(const QString& path) { workerPath_ = path; }
    QString workerPath() const { return workerPath_; }
    void setMpirun(const QString& nameOrPath) { mpirun_ = nameOrPath; }

    bool isActive() const { return active_; }
    bool isLive() const { return process_ != nullptr; }
    qint64 processId() const; // mpirun's (threads: the worker's) pid while running, else 0
    bool isDirect() const { return direct_; } // the last live run started the worker without mpirun
    double elapsedSeconds() const;
    // Why the last stream or recording could not be read to its end (empty if it could).
    QString streamError() const { return streamError_; }
    QString recordingPath() const { return recordingPath_; } // the file opened last (empty for live runs)

    // Both return false (and emit finished(Failed, reason)) when nothing could be started.
    bool start(const RunRequest& request);
    bool openRecording(const QString& path);
    // Terminates the job (mpirun forwards SIGTERM to the ranks), then kills every process of
    // the job's tree after kGraceMs.
    void stop();

    static constexpr int kGraceMs = 3000;
    static constexpr int kDrainMs = 2000; // after mpirun exits, wait this long for the stream's tail

Q_SIGNALS:
    void started(bool live);
    void runInfoReady(shardscope::widgets::RunInfoPtr info);
    void stepsReady(shardscope::widgets::StepListPtr steps);
    void reportReady(shardscope::widgets::RunReportPtr report);
    void failureReceived(shardscope::widgets::FailureInfo failure);
    void finished(shardscope::widgets::RunSession::Outcome outcome, const QString& message);

private:
    bool refuse(const QString& message);
    void beginSession(bool live);
    void onSteps(const StepListPtr& steps);
    void onProcessFinished(int exitCode, QProcess::ExitStatus status);
    void onStreamError(const QString& message);
    void finishLive();
    void finishRecording();
    QString liveFailureMessage() const;
    void killTree();
    void cleanup(Outcome outcome, const QString& message);

    QString workerPath_;
    QString mpirun_ = QStringLiteral("mpirun");
    QThread thread_;
    StreamReceiver* receiver_ = nullptr; // lives on thread_
    QProcess* process_ = nullptr;
    std::unique_ptr<QTemporaryDir> socketDir_;
    QTimer killTimer_;
    QTimer drainTimer_;
    QElapsedTimer clock_;
    std::vector<ProcessId> tree_;
    QString recordingPath_;
    QString stderrTail_;
    QString streamError_;
    std::optional<FailureInfo> failure_;
    std::int64_t lastStep_ = -1; // the worker's number of the last complete step
    int completeSteps_ = 0;
    int exitCode_ = 0;
    bool crashed_ = false;
    bool failedToStart_ = false;
    bool direct_ = false;
    bool active_ = false;
    bool streamOpen_ = false;
    bool streamEnded_ = false;
    bool processExited_ = false;
    bool stopRequested_ = false;
};

} // namespace shardscope::widgets
