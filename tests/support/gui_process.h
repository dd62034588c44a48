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

inline GuiRun runGui(const QStringList& args) {
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
    p.setProcessEnvironment(env);
    p.start(QStringLiteral(SHARDSCOPE_BIN_DIR "/shardscope"), args);
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
