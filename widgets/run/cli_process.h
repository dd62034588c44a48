#pragma once
// The GUI's one supervisor of a `shardscope-cli` invocation (a run on the Ranks page, "Run all
// strategies" on the Compare page): a private 0700 folder for the run's files (those of a GUI
// that was killed are swept when the next is made), the CLI started
// with an argument list plus `--ending FILE --progress json`, its progress read as JSON lines
// from stdout (never its human text), the last line of stderr kept for a refusal, one Stop path
// (SIGTERM to the CLI, which tears its job down; after kGraceMs the whole process tree is
// killed), and the CLI's typed ending (launch::JobEnding) once it exits. The CLI dies with the
// GUI (PR_SET_PDEATHSIG), so no job outlives a crashed window.
#include "launch/ending.h"

#include <QJsonObject>
#include <QObject>
#include <QProcess>
#include <QString>
#include <QStringList>
#include <QTimer>
#include <optional>

namespace shardscope::widgets {

class CliProcess : public QObject {
    Q_OBJECT
public:
    explicit CliProcess(QObject* parent = nullptr);
    ~CliProcess() override; // a running CLI is stopped and waited for: no orphans

    // SIGTERM to the CLI, then its tree killed after this long: the CLI's own
    // SIGTERM-to-SIGKILL grace for its job, and some.
    static constexpr int kGraceMs = 6000;

    // A fresh private folder for the next run's files (the event socket, the ending, a report);
    // empty with *why when it cannot be made. The previous run's folder goes.
    QString prepareFolder(QString* why);
    QString folder() const;
    void releaseFolder();                        // the folder goes (not while the CLI runs)
    QString filePath(const QString& name) const; // in the folder (empty without one)

    // Starts `program arguments… --ending FOLDER/ending.json --progress json`; false (nothing
    // started) when a run is going on or no folder was prepared.
    bool start(const QString& program, const QStringList& arguments);
    void stop(); // the one Stop path; nothing when not running
    bool isRunning() const;
    bool stopRequested() const { return stopRequested_; }
    qint64 processId() const; // the CLI's pid while it runs, else 0

    // After finished(): how it ended.
    bool failedToStart() const { return failedToStart_; }
    bool crashed() const { return crashed_; }
    int exitCode() const { return exitCode_; }
    // The CLI's typed ending (none: it refused before any job ran, or died writing it).
    const std::optional<launch::JobEnding>& ending() const { return ending_; }
    // The last line the CLI wrote to stderr (its one-line refusal), or why it did not start.
    QString lastErrorLine() const;

Q_SIGNALS:
    void progress(const QJsonObject& event); // one --progress json event
    void finished();

private:
    void readProgress();
    void onFinished(int exitCode, QProcess::ExitStatus status);
    void killTree();

    QProcess* process_ = nullptr;
    QString folder_;
    QTimer killTimer_;
    static constexpr qsizetype kMaxLineBytes = 65536; // an event is a few hundred bytes
    QByteArray stdout_;
    bool discarding_ = false; // the rest of an over-long line, up to its newline
    QString stderrTail_;
    std::optional<launch::JobEnding> ending_;
    int exitCode_ = 0;
    bool crashed_ = false;
    bool failedToStart_ = false;
    bool stopRequested_ = false;
};

} // namespace shardscope::widgets
