// shardscope: the Qt GUI. Parses the command line and shows MainWindow; all pages live in
// shardscope::widgets. Plain `shardscope` opens the Ranks page and runs the default scenario.
// Batch mode: --screenshot FILE renders a view offscreen and exits (0, or 2 with one line).
#include "app/batch_capture.h"
#include "app/main_window.h"
#include "app/pages.h"
#include "app/presentation.h"
#include "app/screenshot.h"
#include "checkpoints/checkpoints_page.h"
#include "common/chart_export.h"
#include "common/language.h"
#include "compare/compare_page.h"
#include "core/error.h"
#include "core/user_files.h"
#include "lessons/lesson_player.h"
#include "ranks/ranks_page.h"
#include "timeline/timeline_page.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QFileInfo>
#include <QRegularExpression>
#include <QTimer>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <memory>
#include <optional>
#include <unistd.h>

namespace {

// Bad input is exit code 2 with one line naming what was wrong (docs/design.md).
int fail(const QString& message) {
    std::fprintf(stderr, "shardscope: %s\n", qPrintable(message.simplified()));
    return 2;
}

// Batch mode's stderr is its one line: Qt's chatter that says nothing about the result (libpng's
// warnings about a profile in an icon, the offscreen platform's propagateSizeHints notice) is
// dropped; every other message goes to Qt's own handler.
QtMessageHandler qtHandler = nullptr;
void batchMessageFilter(QtMsgType type, const QMessageLogContext& context, const QString& message) {
    if (type == QtDebugMsg || type == QtInfoMsg || type == QtWarningMsg) {
        if (message.startsWith(QLatin1String("libpng warning")) ||
            message.contains(QLatin1String("propagateSizeHints")))
            return;
    }
    if (qtHandler)
        qtHandler(type, context, message);
    else
        std::fprintf(stderr, "%s\n", qPrintable(qFormatLogMessage(type, context, message)));
}

// --open takes regular files only: a FIFO or a device would block the window (or the batch
// run) in open() before anything could say why.
QString openablePathError(const QString& path) {
    try {
        const auto [fd, size] = shardscope::openInputFile(
            path.toStdString(), "--open", 0, std::numeric_limits<std::uint64_t>::max());
        (void)size;
        ::close(fd);
    } catch (const shardscope::Error& e) {
        return QString::fromStdString(e.what());
    }
    return {};
}

// --size WxH: the window's size in pixels, each side within what a screen can hold.
constexpr int kMinSide = 320;
constexpr int kMaxSide = 8192;
std::optional<QSize> parseSize(const QString& text) {
    static const QRegularExpression form(QStringLiteral("^([0-9]{1,5})[xX]([0-9]{1,5})$"));
    const QRegularExpressionMatch m = form.match(text);
    if (!m.hasMatch()) return std::nullopt;
    const int w = m.captured(1).toInt(), h = m.captured(2).toInt();
    if (w < kMinSide || w > kMaxSide || h < kMinSide || h > kMaxSide) return std::nullopt;
    return QSize(w, h);
}

// --list-lessons: one line per lesson, "ID<tab>TITLE", in the lessons' order.
int listLessons(const QString& language) {
    const auto& library = shardscope::widgets::LessonLibrary::bundled();
    if (!library.problems.isEmpty()) return fail(library.problems.first());
    for (const auto& lesson : library.lessons)
        std::printf("%s\t%s\n", lesson.id.c_str(), lesson.title.in(language.toStdString()).c_str());
    return 0;
}

// --lesson ID [--lesson-step K]: the lesson and its 1-based step, checked against the bundled
// lessons before any window exists.
struct LessonRequest {
    const shardscope::lessons::Lesson* lesson = nullptr;
    QString id;
    int step = 1;
};
LessonRequest lessonRequest(const QString& id, const QString& stepText, QString* error) {
    const auto& library = shardscope::widgets::LessonLibrary::bundled();
    LessonRequest r{library.find(id), id, 1};
    if (!r.lesson) {
        QStringList ids;
        for (const auto& l : library.lessons)
            ids << QString::fromStdString(l.id);
        *error = QApplication::translate("main", "unknown lesson '%1' (expected: %2)")
                     .arg(id, ids.join(QStringLiteral(", ")));
        return r;
    }
    bool ok = true;
    if (!stepText.isNull()) r.step = stepText.toInt(&ok);
    const int count = static_cast<int>(r.lesson->steps.size());
    if (!ok || r.step < 1 || r.step > count) {
        *error =
            QApplication::translate(
                "main", "--lesson-step needs a step between 1 and %1 for lesson '%2', got '%3'")
                .arg(count)
                .arg(id, stepText);
        r.lesson = nullptr;
    }
    return r;
}

// Plays the lesson up to its step (its recording loaded, page shown, element outlined) and
// writes the window to `file`; empty on success, else one line.
QString renderLessonStep(shardscope::widgets::MainWindow& window, const LessonRequest& lesson,
                         const QString& file, QSize size) {
    auto* player = window.findChild<shardscope::widgets::LessonPlayer*>();
    if (!player || !player->start(lesson.id, lesson.step - 1))
        return QApplication::translate("main", "this window has no lessons");
    if (!player->waitUntilSettled(120000))
        return QApplication::translate("main", "lesson '%1' step %2 did not load within 120 s")
            .arg(lesson.id)
            .arg(lesson.step);
    if (!player->problem().isEmpty()) return player->problem();
    QString error;
    shardscope::widgets::renderScreenshot(window, file, size, &error);
    return error;
}

struct Options {
    QCommandLineOption screenshot{
        QStringLiteral("screenshot"),
        QApplication::translate("main",
                                "Render the window to an image (.png, .jpg or .bmp) and exit."),
        QStringLiteral("FILE")};
    QCommandLineOption view{
        QStringLiteral("view"),
        QApplication::translate(
            "main", "Page to show: ranks, timeline, flows, compare, calculator or checkpoints."),
        QStringLiteral("VIEW"), QStringLiteral("ranks")};
    QCommandLineOption lang{QStringLiteral("lang"),
                            QApplication::translate("main", "UI language: en or zh_CN."),
                            QStringLiteral("LANG")};
    QCommandLineOption open{
        QStringLiteral("open"),
        QApplication::translate(
            "main", "Open a recording (.sstrace) on the Ranks page, a run/compare report (.json) "
                    "on the Compare page, or a checkpoint folder on the Checkpoints page."),
        QStringLiteral("RECORDING")};
    QCommandLineOption runDefault{
        QStringLiteral("run-default"),
        QApplication::translate("main", "Run the default scenario (small, 4 CPU ranks, ZeRO-3); "
                                        "the default without --view or --open.")};
    QCommandLineOption afterSteps{
        QStringLiteral("after-steps"),
        QApplication::translate(
            "main", "With --screenshot: capture once this many steps have run (default 1)."),
        QStringLiteral("K")};
    QCommandLineOption size{
        QStringLiteral("size"),
        QApplication::translate(
            "main", "Window size in pixels, e.g. 1024x700 (with --screenshot: the image's size)."),
        QStringLiteral("WxH")};
    QCommandLineOption listLessons{
        QStringLiteral("list-lessons"),
        QApplication::translate("main", "List the lessons (ID and title) and exit.")};
    QCommandLineOption lesson{
        QStringLiteral("lesson"),
        QApplication::translate("main", "Start the lesson ID (see --list-lessons)."),
        QStringLiteral("ID")};
    QCommandLineOption lessonStep{
        QStringLiteral("lesson-step"),
        QApplication::translate("main", "With --lesson: start at step K (from 1)."),
        QStringLiteral("K")};
    QCommandLineOption present{
        QStringLiteral("present"),
        QApplication::translate("main", "Presentation mode: large text for a projector, side "
                                        "panels put away (F5 toggles it).")};
};

// Options that only print (help, version, the lesson list) need no display: with one of them
// the program runs on a QCoreApplication, which loads no platform plugin, so they work on a
// headless machine (QApplication aborts there before main can say anything).
bool onlyPrints(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        const QByteArray a(argv[i]);
        if (a == "--") return false;
        if (a == "--help" || a == "-h" || a == "-?" || a == "--help-all" || a == "--version" ||
            a == "-v" || a == "--list-lessons")
            return true;
    }
    return false;
}

} // namespace

int main(int argc, char** argv) {
    // Installed before QApplication so the platform plugin's own start-up notices are filtered.
    for (int i = 1; i < argc; ++i)
        if (QByteArray(argv[i]) == "--screenshot" ||
            QByteArray(argv[i]).startsWith("--screenshot=")) {
            qtHandler = qInstallMessageHandler(batchMessageFilter);
            break;
        }
    const bool printing = onlyPrints(argc, argv);
    const std::unique_ptr<QCoreApplication> app =
        printing ? std::make_unique<QCoreApplication>(argc, argv)
                 : std::make_unique<QApplication>(argc, argv);
    QApplication::setApplicationName(QStringLiteral("shardscope"));
    QApplication::setApplicationVersion(QStringLiteral(SHARDSCOPE_VERSION));

    QCommandLineParser parser;
    parser.setApplicationDescription(
        QApplication::translate("main", "ZeRO and FSDP, executed and explained."));
    parser.addHelpOption();
    parser.addVersionOption();
    const Options o;
    parser.addOptions({o.screenshot, o.view, o.lang, o.open, o.runDefault, o.afterSteps, o.size,
                       o.listLessons, o.lesson, o.lessonStep, o.present});
    if (!parser.parse(QApplication::arguments())) return fail(parser.errorText());
    if (parser.isSet(QStringLiteral("help"))) parser.showHelp(0);
    if (parser.isSet(QStringLiteral("version"))) parser.showVersion();
    if (!parser.positionalArguments().isEmpty())
        return fail(QApplication::translate("main", "unexpected argument '%1'")
                        .arg(parser.positionalArguments().first()));
    bool stepsOk = true;
    const int afterSteps =
        parser.isSet(o.afterSteps) ? parser.value(o.afterSteps).toInt(&stepsOk) : 0;
    if (!stepsOk || afterSteps < 0 || afterSteps > shardscope::widgets::kMaxSteps)
        return fail(QApplication::translate(
                        "main", "--after-steps needs a step count between 1 and %1, got '%2'")
                        .arg(shardscope::widgets::kMaxSteps)
                        .arg(parser.value(o.afterSteps)));
    if (parser.isSet(o.lessonStep) && !parser.isSet(o.lesson))
        return fail(QApplication::translate("main", "--lesson-step needs --lesson ID"));
    if (parser.isSet(o.lesson) && (parser.isSet(o.open) || parser.isSet(o.runDefault)))
        return fail(QApplication::translate(
            "main",
            "--lesson opens its own runs: it cannot be combined with --open or --run-default"));
    if (parser.isSet(o.runDefault) && parser.isSet(o.open))
        return fail(QApplication::translate("main", "--run-default and --open cannot be combined"));
    // --open DIR: a checkpoint folder, shown on the Checkpoints page.
    const bool openCheckpoint = parser.isSet(o.open) && QFileInfo(parser.value(o.open)).isDir();
    if (parser.isSet(o.open) && !openCheckpoint)
        if (const QString error = openablePathError(parser.value(o.open)); !error.isEmpty())
            return fail(error);
    if (parser.isSet(o.screenshot)) {
        if (const QString error =
                shardscope::widgets::screenshotFormatError(parser.value(o.screenshot));
            !error.isEmpty())
            return fail(error);
        const QStringList inputs =
            parser.isSet(o.open) ? QStringList{parser.value(o.open)} : QStringList{};
        if (const QString error =
                shardscope::widgets::ChartExport::outputProblem(parser.value(o.screenshot), inputs);
            !error.isEmpty())
            return fail(error);
    }

    QSize size = shardscope::widgets::kScreenshotSize;
    if (parser.isSet(o.size)) {
        const auto parsed = parseSize(parser.value(o.size));
        if (!parsed)
            return fail(
                QApplication::translate(
                    "main",
                    "--size needs WIDTHxHEIGHT with each side between %1 and %2 pixels, got '%3'")
                    .arg(kMinSide)
                    .arg(kMaxSide)
                    .arg(parser.value(o.size)));
        size = *parsed;
    }
    QString lessonError;
    const LessonRequest lesson =
        parser.isSet(o.lesson)
            ? lessonRequest(parser.value(o.lesson),
                            parser.isSet(o.lessonStep) ? parser.value(o.lessonStep) : QString(),
                            &lessonError)
            : LessonRequest{};
    if (parser.isSet(o.lesson) && !lesson.lesson) return fail(lessonError);

    shardscope::widgets::LanguageManager language;
    const QString code = parser.isSet(o.lang)
                             ? parser.value(o.lang)
                             : shardscope::widgets::LanguageManager::systemDefault();
    if (!language.setLanguage(code))
        return fail(QApplication::translate("main", "unknown language '%1' (expected: en, zh_CN)")
                        .arg(code));
    if (parser.isSet(o.listLessons)) return listLessons(language.current());
    if (printing) return 0; // not reached: every printing option has returned above

    shardscope::widgets::MainWindow window(&language);
    shardscope::widgets::addDefaultPages(window);
    if (parser.isSet(o.present)) window.presentation().setPresenting(true);
    if (!window.showPage(parser.value(o.view)))
        return fail(QApplication::translate("main", "unknown view '%1' (expected: %2)")
                        .arg(parser.value(o.view), window.pageIds().join(QStringLiteral(", "))));
    auto* ranks =
        qobject_cast<shardscope::widgets::RanksPage*>(window.page(QStringLiteral("ranks")));
    // A picture smaller than the window's smallest layout cannot be rendered: said before any
    // run or rendering starts, with the smallest size that can.
    const QSize least = window.leastSizeForCurrentPage();
    if (parser.isSet(o.screenshot) && parser.isSet(o.size) &&
        (size.width() < least.width() || size.height() < least.height()))
        return fail(QApplication::translate("main", "--size %1x%2 is smaller than the window can "
                                                    "be laid out; it needs at least %3x%4")
                        .arg(size.width())
                        .arg(size.height())
                        .arg(least.width())
                        .arg(least.height()));

    // --open REPORT.json (a run report or `shardscope-cli compare --json`): the Compare page.
    const bool openReports =
        parser.isSet(o.open) &&
        parser.value(o.open).endsWith(QStringLiteral(".json"), Qt::CaseInsensitive);
    if (openReports) {
        auto* compare =
            qobject_cast<shardscope::widgets::ComparePage*>(window.page(QStringLiteral("compare")));
        QString error;
        if (!compare || !compare->openFiles({parser.value(o.open)}, &error)) return fail(error);
        if (!parser.isSet(o.view)) window.showPage(QStringLiteral("compare"));
    }
    if (openCheckpoint) {
        auto* checkpoints = qobject_cast<shardscope::widgets::CheckpointsPage*>(
            window.page(QStringLiteral("checkpoints")));
        if (!checkpoints->openFolder(parser.value(o.open)) && parser.isSet(o.screenshot))
            return fail(checkpoints->message());
        if (!parser.isSet(o.view)) window.showPage(QStringLiteral("checkpoints"));
        // A picture shows the files' verification, which runs on its own thread.
        while (parser.isSet(o.screenshot) && checkpoints->verifying())
            QCoreApplication::processEvents(QEventLoop::WaitForMoreEvents);
    }
    auto* lessons = window.findChild<shardscope::widgets::LessonPlayer*>();
    if (lesson.lesson && parser.isSet(o.screenshot)) {
        if (const QString error =
                renderLessonStep(window, lesson, parser.value(o.screenshot), size);
            !error.isEmpty())
            return fail(error);
        return 0;
    }
    if (parser.isSet(o.screenshot)) {
        shardscope::widgets::BatchRequest batch;
        batch.runDefault = parser.isSet(o.runDefault);
        batch.afterSteps = afterSteps > 0 ? afterSteps : (batch.runDefault ? 1 : 0);
        if (!openReports && !openCheckpoint) batch.openPath = parser.value(o.open);
        if (const QString error = shardscope::widgets::prepareBatch(*ranks, batch);
            !error.isEmpty())
            return fail(error);
        // The timeline shows the step holding the playhead (prepareBatch put it at that step's
        // busiest moment), so one step's unshard → compute → reshard cycles are readable.
        if (auto* timeline = qobject_cast<shardscope::widgets::TimelinePage*>(
                window.page(QStringLiteral("timeline"))))
            timeline->zoomToCurrentStep();
        QString error;
        if (!shardscope::widgets::renderScreenshot(window, parser.value(o.screenshot), size,
                                                   &error))
            return fail(error);
        return 0;
    }
    window.resize(size);
    window.show();
    if (lesson.lesson && lessons) {
        QTimer::singleShot(0, lessons,
                           [lessons, lesson] { lessons->start(lesson.id, lesson.step - 1); });
        return QApplication::exec();
    }
    // A newcomer sees a real run animating within seconds: plain `shardscope` runs the default.
    const bool plain = !parser.isSet(o.view) && !parser.isSet(o.open);
    if (parser.isSet(o.open) && !openReports && !openCheckpoint)
        QTimer::singleShot(0, ranks,
                           [ranks, path = parser.value(o.open)] { ranks->openRecording(path); });
    else if (plain || parser.isSet(o.runDefault))
        QTimer::singleShot(0, ranks, [ranks] { ranks->runDefault(); });
    return QApplication::exec();
}
