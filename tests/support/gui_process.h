#pragma once
// The real `shardscope` binary run offscreen, for tests of its command-line flags.
#include <QProcess>
#include <QProcessEnvironment>
#include <QString>
#include <QStringList>

namespace shardscope::testing {

struct GuiRun {
    int exitCode; // -1: timed out, -2: ended by a signal
    QString out;
    QString err;
};

// `headless`: no display at all (no DISPLAY, WAYLAND_DISPLAY or QT_QPA_PLATFORM), as on a
// server; otherwise the offscreen platform. `program`/`programArgs` wrap the run (e.g. unshare).
inline GuiRun runGui(const QStringList& args, bool headless = false, const QString& program = {},
                     const QStringList& programArgs = {}) {
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    if (headless) {
        for (const char* name : {"QT_QPA_PLATFORM", "DISPLAY", "WAYLAND_DISPLAY"})
            env.remove(QString::fromLatin1(name));
    } else {
        env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
    }
    p.setProcessEnvironment(env);
    const QString gui = QStringLiteral(SHARDSCOPE_BIN_DIR "/shardscope");
    if (program.isEmpty())
        p.start(gui, args);
    else
        p.start(program, programArgs + QStringList{gui} + args);
    if (!p.waitForFinished(60000)) {
        p.kill();
        p.waitForFinished();
        return {-1, {}, QStringLiteral("timed out")};
    }
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -2,
            QString::fromUtf8(p.readAllStandardOutput()),
            QString::fromUtf8(p.readAllStandardError())};
}

// The program's own lines on stderr, without Qt's platform chatter (XDG_RUNTIME_DIR,
// propagateSizeHints).
inline QStringList ourLines(const QString& err) {
    QStringList lines;
    for (const QString& l : err.split(QLatin1Char('\n'), Qt::SkipEmptyParts))
        if (l.startsWith(QLatin1String("shardscope:"))) lines << l;
    return lines;
}

} // namespace shardscope::testing
