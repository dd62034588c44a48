// shardscope: the Qt GUI. Parses the command line and shows MainWindow; all pages live in
// shardscope::widgets. Batch mode: --screenshot FILE renders a view offscreen and exits.
#include <QApplication>
#include <QCommandLineParser>
#include <cstdio>

#include "language.h"
#include "main_window.h"
#include "screenshot.h"

namespace {

// Bad input is exit code 2 with one line naming what was wrong (DESIGN.md).
int fail(const QString& message) {
    std::fprintf(stderr, "shardscope: %s\n", qPrintable(message));
    return 2;
}

} // namespace

int main(int argc, char** argv) {
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("shardscope"));
    QApplication::setApplicationVersion(QStringLiteral(SHARDSCOPE_VERSION));

    QCommandLineParser parser;
    parser.setApplicationDescription(QApplication::translate("main", "ZeRO and FSDP, executed and explained."));
    parser.addHelpOption();
    parser.addVersionOption();
    const QCommandLineOption screenshot(QStringLiteral("screenshot"),
                                        QApplication::translate("main", "Render the window to a PNG and exit."),
                                        QStringLiteral("FILE"));
    const QCommandLineOption view(QStringLiteral("view"), QApplication::translate("main", "Page to show: calculator."),
                                  QStringLiteral("VIEW"), QStringLiteral("calculator"));
    const QCommandLineOption lang(QStringLiteral("lang"), QApplication::translate("main", "UI language: en or zh_CN."),
                                  QStringLiteral("LANG"));
    parser.addOptions({screenshot, view, lang});
    if (!parser.parse(QApplication::arguments())) return fail(parser.errorText());
    if (parser.isSet(QStringLiteral("help"))) parser.showHelp(0);
    if (parser.isSet(QStringLiteral("version"))) parser.showVersion();
    if (!parser.positionalArguments().isEmpty())
        return fail(QApplication::translate("main", "unexpected argument '%1'").arg(parser.positionalArguments().first()));

    shardscope::widgets::LanguageManager language;
    const QString code = parser.isSet(lang) ? parser.value(lang) : shardscope::widgets::LanguageManager::systemDefault();
    if (!language.setLanguage(code))
        return fail(QApplication::translate("main", "unknown language '%1' (expected: en, zh_CN)").arg(code));

    shardscope::widgets::MainWindow window(&language);
    shardscope::widgets::addDefaultPages(window);
    if (!window.showPage(parser.value(view)))
        return fail(QApplication::translate("main", "unknown view '%1' (expected: %2)")
                        .arg(parser.value(view), window.pageIds().join(QStringLiteral(", "))));
    if (parser.isSet(screenshot)) {
        QString error;
        if (!shardscope::widgets::renderScreenshot(window, parser.value(screenshot), shardscope::widgets::kScreenshotSize, &error))
            return fail(error);
        return 0;
    }
    window.resize(shardscope::widgets::kScreenshotSize);
    window.show();
    return QApplication::exec();
}
