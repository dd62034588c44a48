#include "run/cli_process.h"

#include "core/error.h"
#include "launch/job.h"
#include "launch/process_tree.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <csignal>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sys/prctl.h>
#include <utility>

namespace shardscope::widgets {

CliProcess::CliProcess(QObject* parent) : QObject(parent) {
    killTimer_.setSingleShot(true);
    killTimer_.setInterval(kGraceMs);
    connect(&killTimer_, &QTimer::timeout, this, &CliProcess::killTree);
}

CliProcess::~CliProcess() {
    if (isRunning()) {
        process_->disconnect(this);
        process_->terminate(); // the CLI tears its job down
        if (!process_->waitForFinished(kGraceMs)) {
            killTree();
            process_->waitForFinished(1000);
        }
    }
    releaseFolder();
}

QString CliProcess::prepareFolder(QString* why) {
    if (isRunning()) return {};
    releaseFolder();
    // /tmp/shardscope-gui-<pid>-XXXXXX, 0700: only this user reaches the socket and the files;
    // the folders of a GUI that was killed (its pid gone) are swept first.
    try {
        folder_ = QString::fromStdString(launch::makePrivateFolder("shardscope-gui"));
    } catch (const Error& e) {
        if (why) *why = QString::fromUtf8(e.what());
        return {};
    }
    return folder_;
}

QString CliProcess::folder() const {
    return folder_;
}

void CliProcess::releaseFolder() {
    if (isRunning() || folder_.isEmpty()) return;
    std::error_code ignored;
    std::filesystem::remove_all(folder_.toStdString(), ignored);
    folder_.clear();
}

QString CliProcess::filePath(const QString& name) const {
    return folder_.isEmpty() ? QString() : QDir(folder_).filePath(name);
}

bool CliProcess::start(const QString& program, const QStringList& arguments) {
    if (isRunning() || folder_.isEmpty()) return false;
    if (process_) process_->deleteLater(); // it may be emitting the signal that got us here
    process_ = new QProcess(this);
    // Runs in the child between fork and exec: only async-signal-safe calls.
    process_->setChildProcessModifier([] { ::prctl(PR_SET_PDEATHSIG, SIGTERM); });
    stdout_.clear();
    discarding_ = false;
    stderrTail_.clear();
    ending_.reset();
    exitCode_ = 0;
    crashed_ = failedToStart_ = stopRequested_ = false;
    QFile::remove(filePath(QStringLiteral("ending.json")));
    connect(process_, &QProcess::readyReadStandardOutput, this, &CliProcess::readProgress);
    connect(process_, &QProcess::readyReadStandardError, this, [this] {
        stderrTail_ += QString::fromLocal8Bit(process_->readAllStandardError());
        if (stderrTail_.size() > 65536)
            stderrTail_ = stderrTail_.right(65536); // the CLI's one line is at the end
    });
    connect(process_, &QProcess::finished, this, &CliProcess::onFinished);
    connect(process_, &QProcess::errorOccurred, this, [this](QProcess::ProcessError e) {
        if (e != QProcess::FailedToStart) return; // the others end in finished()
        failedToStart_ = crashed_ = true;
        stderrTail_ = process_->errorString();
        Q_EMIT finished();
    });
    QStringList all = arguments;
    all << QStringLiteral("--ending") << filePath(QStringLiteral("ending.json"))
        << QStringLiteral("--progress") << QStringLiteral("json");
    process_->start(program, all);
    return true;
}

void CliProcess::stop() {
    if (!isRunning() || stopRequested_) return;
    stopRequested_ = true;
    process_->terminate();
    killTimer_.start();
}

bool CliProcess::isRunning() const {
    return process_ && process_->state() != QProcess::NotRunning;
}

qint64 CliProcess::processId() const {
    return isRunning() ? process_->processId() : 0;
}

QString CliProcess::lastErrorLine() const {
    const QStringList lines = stderrTail_.split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    return lines.isEmpty() ? QString() : lines.last().trimmed();
}

// One JSON object per line; anything else (there is nothing else with --progress json) is
// skipped, as is a line past kMaxLineBytes (the rest of it up to its newline too).
void CliProcess::readProgress() {
    stdout_ += process_->readAllStandardOutput();
    for (qsizetype nl = stdout_.indexOf('\n'); nl >= 0; nl = stdout_.indexOf('\n')) {
        const QByteArray line = stdout_.left(nl);
        stdout_.remove(0, nl + 1);
        if (std::exchange(discarding_, false) || line.size() > kMaxLineBytes) continue;
        const QJsonDocument doc = QJsonDocument::fromJson(line);
        if (doc.isObject() && doc.object().contains(QStringLiteral("event")))
            Q_EMIT progress(doc.object());
    }
    if (stdout_.size() > kMaxLineBytes) {
        stdout_.clear();
        discarding_ = true;
    }
}

void CliProcess::onFinished(int exitCode, QProcess::ExitStatus status) {
    killTimer_.stop();
    readProgress();
    exitCode_ = exitCode;
    crashed_ = status == QProcess::CrashExit;
    QFile file(filePath(QStringLiteral("ending.json")));
    if (!folder_.isEmpty() && file.open(QIODevice::ReadOnly)) {
        try {
            ending_ = launch::endingFromJson(nlohmann::json::parse(file.readAll().toStdString()));
        } catch (const std::exception&) {
            ending_.reset(); // a CLI that died while writing it: its exit status says the rest
        }
    }
    Q_EMIT finished();
}

// The last resort when the CLI did not end within its grace: nothing of its tree may outlive
// the run.
void CliProcess::killTree() {
    if (!isRunning()) return;
    launch::signalAll(launch::descendantPids(static_cast<pid_t>(process_->processId())), SIGKILL);
    process_->kill();
}

} // namespace shardscope::widgets
