// The small things a class notices: DDP is the baseline, not "1.00× less memory"; charts name
// categories as people say them; the Timeline has zoom buttons and a fit; an empty Compare page
// says what to do; the Calculator's formulas go through the translator; the replay can follow
// a live run.
#include "calculator/calculator_page.h"
#include "calculator/derivation_model.h"
#include "common/qcustomplot.h"
#include "compare/compare_view.h"
#include "playback/playback_bar.h"
#include "ranks/ranks_page.h"
#include "ranks/run_theory_charts.h"
#include "ranks/run_timeline_charts.h"
#include "run/replay_player.h"
#include "run/run_document.h"
#include "sample_reports.h"
#include "timeline/timeline_page.h"
#include "timeline/timeline_view.h"
#include "timeline_test_recording.h"

#include <QCheckBox>
#include <QFile>
#include <QLabel>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>
#include <QTranslator>

using namespace shardscope;
using namespace shardscope::widgets;

namespace {

QString writeRecording(const QTemporaryDir& dir, const std::string& bytes) {
    const QString path = dir.filePath(QStringLiteral("run.sstrace"));
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly)) return {};
    f.write(bytes.data(), static_cast<qint64>(bytes.size()));
    return path;
}

// Translates the engine's words (context TheoryText) into upper case: shows they pass tr().
class ShoutingTranslator : public QTranslator {
public:
    QString translate(const char* context, const char* source, const char*, int) const override {
        return QLatin1String(context) == QLatin1String("TheoryText")
                   ? QString::fromUtf8(source).toUpper()
                   : QString();
    }
    bool isEmpty() const override { return false; }
};

} // namespace

class GuiPolishTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void ddpIsTheBaselineNotOneTimesLess() {
        QTemporaryDir dir;
        testrec::Spec spec;
        spec.ddp = true;
        spec.steps = 2;
        RunDocument document;
        RanksPage page(document);
        QVERIFY(page.openRecording(writeRecording(dir, testrec::makeRecording(spec))));
        QTRY_VERIFY_WITH_TIMEOUT(!page.isBusy() && page.model().stepCount() == 2, 20000);
        page.finishPendingDraws();
        const QString line = page.findChild<QLabel*>(QStringLiteral("runSavings"))->text();
        QVERIFY2(!line.isEmpty(), "no savings line for a DDP recording");
        QVERIFY2(!line.contains(QStringLiteral("less memory")), qPrintable(line));
        QVERIFY2(line.contains(QStringLiteral("baseline")), qPrintable(line));
        // The measured-vs-theory chart names categories as people say them, not param_full.
        auto ticker =
            qSharedPointerCast<QCPAxisTickerText>(page.measuredChart()->plot()->yAxis->ticker());
        QVERIFY(ticker);
        QVERIFY(!ticker->ticks().isEmpty());
        for (const QString& label : ticker->ticks())
            QVERIFY2(!label.contains(QLatin1Char('_')), qPrintable(label));
    }

    void timelineZoomButtonsAndFit() {
        QTemporaryDir dir;
        testrec::Spec spec;
        spec.steps = 3;
        RunDocument document;
        TimelinePage page(document);
        page.resize(1000, 600);
        QVERIFY(
            document.session().openRecording(writeRecording(dir, testrec::makeRecording(spec))));
        QTRY_VERIFY_WITH_TIMEOUT(
            !document.session().isActive() && document.model().stepCount() == 3, 20000);
        QVERIFY(!page.followsStep()); // a recording opens fitted to the whole run
        TimelineView* view = page.view();
        view->fitAll();
        const double whole = view->windowEnd() - view->windowStart();
        page.findChild<QToolButton*>(QStringLiteral("timelineZoomIn"))->click();
        QVERIFY(std::abs((view->windowEnd() - view->windowStart()) * 2 - whole) < whole * 1e-6);
        page.findChild<QToolButton*>(QStringLiteral("timelineZoomOut"))->click();
        page.findChild<QToolButton*>(QStringLiteral("timelineZoomOut"))->click();
        page.findChild<QToolButton*>(QStringLiteral("timelineFit"))->click();
        QCOMPARE(view->windowEnd() - view->windowStart(), whole);
        // "Current step" shows the step at the playhead.
        document.player().seek(document.model().step(1).firstEvent + 5);
        page.findChild<QToolButton*>(QStringLiteral("timelineStep"))->click();
        const replay::StepData& s = document.model().step(1);
        QVERIFY(view->windowStart() < static_cast<double>(s.replayStartNs));
        QVERIFY(view->windowEnd() > static_cast<double>(s.replayStartNs + s.durationNs));
        QVERIFY(view->windowEnd() - view->windowStart() < whole / 2);
        // A live run starts on the current step.
        Q_EMIT document.session().started(true);
        QVERIFY(page.followsStep());
    }

    void emptyCompareSaysWhatToDo() {
        CompareView view;
        view.resize(1000, 600);
        view.show();
        auto* empty = view.findChild<QLabel*>(QStringLiteral("compareEmpty"));
        QVERIFY(empty);
        QVERIFY(empty->isVisible());
        QVERIFY(empty->text().contains(QStringLiteral("Run all strategies")));
        QVERIFY(!view.ledgerPlot()->isVisible()); // no empty axes
        view.setRuns({testing::typedReport("ddp", 400, 9000, "d1"),
                      testing::typedReport("zero3", 100, 5000, "d1")});
        QVERIFY(!empty->isVisible());
        QVERIFY(view.ledgerPlot()->isVisible());
    }

    void calculatorFormulasAreTranslated() {
        ShoutingTranslator shout;
        QCoreApplication::installTranslator(&shout);
        CalculatorPage page;
        page.recomputeNow();
        auto* table = page.findChild<QTableView*>(QStringLiteral("derivationTable"));
        QVERIFY(table && table->model()->rowCount() > 1);
        const QString formula =
            table->model()->index(0, DerivationModel::FormulaCol).data().toString();
        const QString source =
            table->model()->index(0, DerivationModel::SourceCol).data().toString();
        QCoreApplication::removeTranslator(&shout);
        QVERIFY2(formula.contains(QStringLiteral("PADDED ELEMENTS")) ||
                     formula.contains(QStringLiteral("UNPADDED")),
                 qPrintable(formula));
        QVERIFY2(source.contains(QStringLiteral("ZERO PAPER")), qPrintable(source));
    }

    // A chart narrower than its title wraps it instead of clipping both ends.
    void narrowChartTitlesWrap() {
        MemoryTimelineChart chart;
        chart.setRank(1); // sets the title
        chart.resize(250, 220);
        chart.show();
        QVERIFY(QTest::qWaitForWindowExposed(&chart));
        auto* title = qobject_cast<QCPTextElement*>(chart.plot()->plotLayout()->element(0, 0));
        QVERIFY(title);
        QTRY_VERIFY(title->text().contains(QLatin1Char('\n')));
        const QFontMetrics fm(title->font());
        for (const QString& line : title->text().split(QLatin1Char('\n')))
            QVERIFY2(fm.horizontalAdvance(line) <= 250, qPrintable(line));
        chart.resize(1400, 220);
        QTRY_VERIFY(!title->text().contains(QLatin1Char('\n')));
    }

    void followLiveJumpsToTheNewestStep() {
        testrec::Spec spec;
        spec.steps = 3;
        const auto model = testrec::loadModel(testrec::makeRecording(spec));
        ReplayPlayer player(*model);
        PlaybackBar bar(*model, player);
        bar.refresh();
        player.seek(10);
        QVERIFY(!bar.followsLive());
        bar.refresh(); // more steps arrived: without follow, the playhead stays
        QCOMPARE(player.cursor().index(), std::uint64_t{10});
        bar.findChild<QCheckBox*>(QStringLiteral("followLive"))->setChecked(true);
        QCOMPARE(player.cursor().index(), model->step(2).firstEvent);
        QVERIFY(player.isPlaying());
        player.pause();
    }
};

QTEST_MAIN(GuiPolishTest)
#include "gui_polish_test.moc"
