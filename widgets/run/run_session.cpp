#include "run/run_session.h"

#include "common/failure_text.h"
#include "common/run_labels.h"
#include "core/error.h"
#include "launch/mpirun.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <nlohmann/json.hpp>

namespace shardscope::widgets {

RunSession::RunSession(QObject* parent)
    : QObject(parent),
      cliPath_(QCoreApplication::applicationDirPath() + QStringLiteral("/shardscope-cli")),
      workerPath_(QCoreApplication::applicationDirPath() + QStringLiteral("/shardscope-worker")) {
    registerRunMetaTypes();
    receiver_ = new StreamReceiver;
    receiver_->moveToThread(&thread_);
    connect(&thread_, &QThread::finished, receiver_, &QObject::deleteLater);
    connect(receiver_, &StreamReceiver::runInfoReady, this, [this](const RunInfoPtr& info) {
        stepsBefore_ = info ? info->stepsBefore : 0; // a resumed run's steps count on
        Q_EMIT runInfoReady(info);
    });
    connect(receiver_, &StreamReceiver::stepsReady, this, &RunSession::onSteps);
    connect(receiver_, &StreamReceiver::reportReady, this, &RunSession::reportReady);
    connect(receiver_, &StreamReceiver::reportUnreadable, this, &RunSession::reportUnreadable);
    connect(receiver_, &StreamReceiver::failureReceived, this,
            [this](const replay::FailureInfo& f) {
                if (!failure_) failure_ = f;
                Q_EMIT failureReceived(f);
            });
    connect(receiver_, &StreamReceiver::streamEnded, this, [this] { streamEnded_ = true; });
    connect(receiver_, &StreamReceiver::streamError, this, &RunSession::onStreamError);
    connect(receiver_, &StreamReceiver::connectionOpened, this, [this] { streamOpen_ = true; });
    connect(receiver_, &StreamReceiver::connectionClosed, this, [this] {
        streamOpen_ = false;
        if (processExited_) finishLive();
    });
    connect(receiver_, &StreamReceiver::finishedReading, this, &RunSession::finishRecording);
    thread_.setObjectName(QStringLiteral("shardscope-decoder"));
    thread_.start();

    cli_ = new CliProcess(this);
    connect(cli_, &CliProcess::finished, this, &RunSession::onCliFinished);
    drainTimer_.setSingleShot(true);
    drainTimer_.setInterval(kDrainMs);
    connect(&drainTimer_, &QTimer::timeout, this, &RunSession::finishLive);
}

RunSession::~RunSession() {
    disconnect(cli_, nullptr, this, nullptr);
    delete cli_; // stops a running CLI and waits for it
    cli_ = nullptr;
    QMetaObject::invokeMethod(receiver_, &StreamReceiver::close, Qt::BlockingQueuedConnection);
    thread_.quit();
    thread_.wait();
}

qint64 RunSession::processId() const {
    return cli_ ? cli_->processId() : 0;
}

double RunSession::elapsedSeconds() const {
    return clock_.isValid() ? static_cast<double>(clock_.elapsed()) / 1000.0 : 0.0;
}

bool RunSession::refuse(const QString& message) {
    Q_EMIT finished(Outcome::Failed, message);
    return false;
}

void RunSession::beginSession(bool live) {
    active_ = true;
    streamOpen_ = streamEnded_ = processExited_ = userStopped_ = false;
    failure_.reset();
    streamError_.clear();
    completeSteps_ = 0;
    stepsBefore_ = 0;
    clock_.start();
    live_ = live;
}

bool RunSession::start(const RunRequest& request) {
    if (active_) return false;
    if (const auto issues = validate(request); !issues.empty())
        return refuse(tr("Invalid settings: %1").arg(issues.front().message));
    // Ranks as threads (--shared-device): the worker is the only process, mpirun is not needed.
    std::optional<std::string> mpirun;
    if (!request.threads) {
        mpirun = launch::findExecutable(mpirun_.toStdString());
        if (!mpirun)
            return refuse(tr("mpirun was not found on PATH: install OpenMPI (e.g. apt install "
                             "openmpi-bin) to run jobs, "
                             "or tick “Ranks as threads in one process”"));
    }
    if (!QFileInfo(workerPath_).isExecutable())
        return refuse(tr("shardscope-worker was not found at %1: build it beside the GUI (target "
                         "shardscope-worker)")
                          .arg(workerPath_));
    if (!QFileInfo(cliPath_).isExecutable())
        return refuse(tr("shardscope-cli was not found at %1: build it beside the GUI (target "
                         "shardscope-cli); it supervises every run")
                          .arg(cliPath_));

    // The supervisor's private 0700 folder: only this user can reach the socket.
    QString folderError;
    const QString folder = cli_->prepareFolder(&folderError);
    if (folder.isEmpty())
        return refuse(
            tr("cannot create a private folder for the event stream: %1").arg(folderError));
    const QString socketPath = QDir(folder).filePath(QStringLiteral("stream.sock"));
    QString listenError;
    QMetaObject::invokeMethod(
        receiver_, [&] { return receiver_->listen(socketPath); }, Qt::BlockingQueuedConnection,
        &listenError);
    if (!listenError.isEmpty())
        return refuse(tr("cannot listen for the event stream: %1").arg(listenError));
    // The receiver has closed the previous stream (listen() closes first): deliver whatever
    // it queued for the previous run now, before this run's started() resets the views.
    QCoreApplication::sendPostedEvents(this, QEvent::MetaCall);

    // The CLI validates again, supervises the job and forwards the stream to socketPath; the
    // worker's flags are the same either way (threads: they carry --shared-device --ranks N).
    QStringList arguments{QStringLiteral("run")};
    if (!request.threads) arguments << QStringLiteral("--ranks") << QString::number(request.ranks);
    arguments << workerArguments(request, socketPath) << QStringLiteral("--worker") << workerPath_;
    if (mpirun) arguments << QStringLiteral("--mpirun") << QString::fromStdString(*mpirun);
    if (const auto listing = importListingFor(request)) {
        const QString path = QDir(folder).filePath(QStringLiteral("config_import.json"));
        const QByteArray json = QByteArray::fromStdString(report::toJson(*listing).dump());
        QFile file(path);
        if (!file.open(QIODevice::WriteOnly) || file.write(json) != json.size() || !file.flush())
            return refuse(tr("cannot write the imported configuration's listing: %1")
                              .arg(file.errorString()));
        arguments << QStringLiteral("--config-import") << path;
    }

    beginSession(true);
    direct_ = request.threads;
    // Announced before the process starts, so whoever listens sees a job it can stop.
    Q_EMIT started(true);
    cli_->start(cliPath_, arguments);
    return true;
}

void RunSession::setConfigImport(const report::ConfigImport& listing,
                                 const RunRequest& afterImport) {
    configImport_ = std::pair{listing, afterImport};
}

std::optional<report::ConfigImport> RunSession::importListingFor(const RunRequest& request) const {
    if (!configImport_) return std::nullopt;
    return importListingAsRun(configImport_->first, configImport_->second, request);
}

bool RunSession::openRecording(const QString& path) {
    if (active_) return false;
    QMetaObject::invokeMethod(receiver_, &StreamReceiver::close, Qt::BlockingQueuedConnection);
    QCoreApplication::sendPostedEvents(this,
                                       QEvent::MetaCall); // the previous run's tail, see start()
    beginSession(false);
    recordingPath_ = path;
    Q_EMIT started(false);
    QMetaObject::invokeMethod(
        receiver_, [this, path] { receiver_->readFile(path); }, Qt::QueuedConnection);
    return true;
}

void RunSession::stop() {
    if (!isLive()) return;
    userStopped_ = true; // the user's Stop, not a stream this session could not read
    cli_->stop();
    Q_EMIT stopRequested();
}

void RunSession::onSteps(const StepListPtr& steps) {
    for (const replay::StepPtr& s : *steps)
        if (s->complete) ++completeSteps_;
    Q_EMIT stepsReady(steps);
}

void RunSession::onStreamError(const QString& message) {
    if (streamError_.isEmpty()) streamError_ = message;
    // A stream we cannot read is useless to keep running; a recording just stops here.
    if (isLive()) cli_->stop();
}

void RunSession::onCliFinished() {
    if (!isLive()) return;
    processExited_ = true;
    if (streamOpen_ && !cli_->failedToStart())
        drainTimer_.start(); // the stream's tail is still in flight
    else
        finishLive();
}

QString RunSession::endingText(const launch::JobEnding& e) {
    using launch::EndingKind;
    const QString cause = failureText(e.cause);
    switch (e.kind) {
    case EndingKind::Completed:
        return tr("Run finished");
    case EndingKind::Failed:
        // No rank but a signal: the process holding every rank thread (or mpirun) was killed.
        if (!e.rank && e.signal > 0)
            return e.step ? tr("The job ended in step %1: %2").arg(*e.step).arg(cause)
                          : tr("The job ended: %1").arg(cause);
        if (!e.rank) return tr("The launcher failed: %1").arg(cause);
        if (e.signal > 0 || e.exitCode != 0) {
            const QString how =
                e.signal > 0
                    ? (e.step ? tr("Rank %1 exited (signal %2) in step %3")
                                    .arg(*e.rank)
                                    .arg(e.signal)
                                    .arg(*e.step)
                              : tr("Rank %1 exited (signal %2)").arg(*e.rank).arg(e.signal))
                    : (e.step ? tr("Rank %1 exited (exit code %2) in step %3")
                                    .arg(*e.rank)
                                    .arg(e.exitCode)
                                    .arg(*e.step)
                              : tr("Rank %1 exited (exit code %2)").arg(*e.rank).arg(e.exitCode));
            // Where the cause says more than how the process ended (what did not fit), say it.
            return hasNamedCause(e) ? tr("%1: %2").arg(how, cause) : how;
        }
        return tr("Rank %1 failed %2: %3")
            .arg(*e.rank)
            .arg(failureWhen(e.step ? *e.step - 1 : -1))
            .arg(cause);
    case EndingKind::Stalled:
        // The progress records named the rank that went silent; the cause says where it stopped.
        if (e.rank)
            return e.step ? tr("Rank %1 is stuck in step %2: %3; the job was torn down")
                                .arg(*e.rank)
                                .arg(*e.step)
                                .arg(cause)
                          : tr("Rank %1 is stuck during setup: %2; the job was torn down")
                                .arg(*e.rank)
                                .arg(cause);
        return tr("No progress in step %1 for the stall timeout: a rank is stuck; the job was torn "
                  "down")
            .arg(e.step.value_or(1));
    case EndingKind::Interrupted:
        return tr("The job was interrupted in step %1 and torn down").arg(e.step.value_or(1));
    case EndingKind::Stopped:
        return e.completedSteps > 0
                   ? tr("Stopped after %n step(s)", nullptr, static_cast<int>(e.completedSteps))
                   : tr("Stopped before the first step");
    case EndingKind::InvalidInput:
        return tr("The worker refused its settings: %1").arg(cause);
    case EndingKind::LaunchError:
        if (e.signal > 0)
            return e.step
                       ? tr("mpirun was killed (signal %1) in step %2; the job was torn down")
                             .arg(e.signal)
                             .arg(*e.step)
                       : tr("mpirun was killed (signal %1); the job was torn down").arg(e.signal);
        if (e.exitCode != 0) return tr("mpirun exited with code %1: %2").arg(e.exitCode).arg(cause);
        return tr("The job could not run: %1").arg(cause);
    case EndingKind::StreamError:
        return tr("The event stream could not be read: %1").arg(cause);
    }
    return cause;
}

bool RunSession::hasNamedCause(const launch::JobEnding& e) {
    return !e.cause.empty() && e.cause.rfind("exited (", 0) != 0;
}

// The CLI's typed ending (--ending FILE); without one the CLI refused before any job started,
// and its one stderr line says why.
QString RunSession::liveFailureMessage() {
    if (!streamError_.isEmpty())
        return tr("The event stream could not be read: %1").arg(streamError_);
    const std::optional<launch::JobEnding>& ending = cli_->ending();
    if (ending && ending->kind != launch::EndingKind::Completed) {
        // A rank's exit status alone ("exited (exit code 1)") hides why it exited: the stream's
        // Failure record, where one arrived, names it (an allocation beyond the budget, …).
        if (ending->kind == launch::EndingKind::Failed && !hasNamedCause(*ending) && failure_ &&
            !failure_->message.empty()) {
            launch::JobEnding named = *ending;
            named.cause = failure_->message;
            return endingText(named);
        }
        return endingText(*ending);
    }
    const QString last = cli_->lastErrorLine();
    if (cli_->failedToStart()) return tr("shardscope-cli did not run: %1").arg(last);
    if (cli_->crashed()) return tr("shardscope-cli was killed or crashed");
    if (cli_->exitCode() != 0)
        return tr("shardscope-cli exited with code %1: %2").arg(cli_->exitCode()).arg(last);
    return tr("The run ended without finishing its event stream (complete steps: %1)")
        .arg(completeSteps_);
}

void RunSession::finishLive() {
    if (!isLive() || !processExited_) return;
    drainTimer_.stop();
    if (userStopped_ && streamError_.isEmpty()) {
        cleanup(Outcome::Stopped, completeSteps_ > 0
                                      ? tr("Stopped after %n step(s)", nullptr, completeSteps_)
                                      : tr("Stopped before the first step"));
        return;
    }
    const std::optional<launch::JobEnding>& ending = cli_->ending();
    const bool ok = !cli_->crashed() && cli_->exitCode() == 0 && streamEnded_ &&
                    streamError_.isEmpty() && !failure_ && ending &&
                    ending->kind == launch::EndingKind::Completed;
    cleanup(ok ? Outcome::Completed : Outcome::Failed,
            ok ? tr("Run finished in %1 s").arg(elapsedSeconds(), 0, 'f', 1)
               : liveFailureMessage());
}

void RunSession::finishRecording() {
    if (!active_ || live_) return;
    if (!streamError_.isEmpty()) {
        cleanup(Outcome::Failed, tr("Cannot open the recording: %1").arg(streamError_));
    } else if (failure_ && failure_->rank < 0) {
        // The launcher closed the recording (a stop, a signal, a stall without a rank): its
        // message says what ended the run and when; no rank failed.
        cleanup(Outcome::Failed,
                tr("This recording ends early: %1").arg(failureText(failure_->message)));
    } else if (failure_) {
        cleanup(Outcome::Failed, tr("This recording ends in a failure: rank %1 %2: %3")
                                     .arg(failure_->rank)
                                     .arg(failureWhen(failure_->step, stepsBefore_))
                                     .arg(failureText(failure_->message)));
    } else {
        cleanup(Outcome::Completed, tr("Opened %1").arg(QFileInfo(recordingPath_).fileName()));
    }
}

void RunSession::cleanup(Outcome outcome, const QString& message) {
    QMetaObject::invokeMethod(receiver_, &StreamReceiver::close, Qt::QueuedConnection);
    if (live_) cli_->releaseFolder(); // its ending is read; the socket file goes with it
    active_ = false;
    Q_EMIT finished(outcome, message);
}

} // namespace shardscope::widgets
