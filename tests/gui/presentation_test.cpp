// Presentation mode on a 1024×768 projector, in English and Chinese: every page and every step
// of every lesson. The window keeps the projector's size, no page scrolls sideways, every text a
// class reads (widgets and charts) is at least 18 px, charts keep a readable plot area, an
// outlined element is whole, big enough and never under the lesson's bar, and leaving gives
// every font back. SHARDSCOPE_PRESENT_SHOTS=DIR keeps a picture of each, to look at.
#include "app/main_window.h"
#include "app/pages.h"
#include "app/presentation.h"
#include "chart_readability.h"
#include "common/language.h"
#include "common/qcustomplot.h"
#include "compare/compare_page.h"
#include "compare/compare_view.h"
#include "flows/flow_view.h"
#include "lessons/lesson_library.h"
#include "lessons/lesson_player.h"
#include "ranks/rank_ledger_view.h"
#include "ranks/ranks_page.h"
#include "timeline/timeline_view.h"

#include <QAbstractButton>
#include <QAbstractSpinBox>
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QScrollArea>
#include <QScrollBar>
#include <QTabBar>
#include <QTemporaryDir>
#include <QTest>

using namespace shardscope;
using namespace shardscope::widgets;
using namespace shardscope::testing;

namespace {

const QSize kProjector(1024, 768);
constexpr int kFloor = Presentation::kTextFloorPixels;
// The plot area a chart keeps (its axes' rectangle): below this its ticks and bars run together
// on a projector.
constexpr int kPlotWidth = 220, kPlotHeight = 90;
constexpr int kLedgerBars = 90; // the Ranks page's bars, below their legend (85 at 1024×700)

struct Fixture {
    LanguageManager language;
    MainWindow window{&language};
    QTemporaryDir dir;
    explicit Fixture(const QString& lang) {
        language.setLanguage(lang);
        addDefaultPages(window);
        window.setAttribute(Qt::WA_DontShowOnScreen);
        window.resize(kProjector);
        window.show();
        window.presentation().setPresenting(true);
    }
    LessonPlayer* player() { return window.findChild<LessonPlayer*>(); }
};

void settle() {
    for (int i = 0; i < 3; ++i) {
        QCoreApplication::processEvents();
        QTest::qWait(20);
    }
}

// The texts of `root` a class reads, in widgets: smaller than the floor, named.
QString smallWidgetText(QWidget* root) {
    QString out;
    for (QWidget* w : root->findChildren<QWidget*>()) {
        if (!w->isVisible() || w->visibleRegion().isEmpty()) continue; // a collapsed pane's too
        const bool text = qobject_cast<QLabel*>(w) || qobject_cast<QAbstractButton*>(w) ||
                          qobject_cast<QComboBox*>(w) || qobject_cast<QAbstractSpinBox*>(w) ||
                          qobject_cast<QTabBar*>(w) || qobject_cast<QLineEdit*>(w);
        if (auto* label = qobject_cast<QLabel*>(w); label && label->text().isEmpty()) continue;
        const int px = QFontInfo(w->font()).pixelSize();
        if (text && px < kFloor)
            out += QStringLiteral("\n  %1 %2 \"%3\": %4 px")
                       .arg(QString::fromLatin1(w->metaObject()->className()), w->objectName(),
                            qobject_cast<QLabel*>(w)
                                ? qobject_cast<QLabel*>(w)->text().left(40)
                                : (qobject_cast<QAbstractButton*>(w)
                                       ? qobject_cast<QAbstractButton*>(w)->text().left(40)
                                       : QString()))
                       .arg(px);
    }
    return out;
}

// The texts of every visible chart under `root`, and its plot area.
QString smallChartText(QWidget* root) {
    QString out;
    const auto check = [&](const QString& what, const QFont& f) {
        if (QFontInfo(f).pixelSize() < kFloor)
            out += QStringLiteral("\n  %1: %2 px").arg(what).arg(QFontInfo(f).pixelSize());
    };
    for (QCustomPlot* plot : root->findChildren<QCustomPlot*>()) {
        if (!plot->isVisible() || plot->visibleRegion().isEmpty()) continue;
        plot->replot(QCustomPlot::rpImmediateRefresh);
        const QString name = plot->objectName();
        for (QCPAxisRect* rect : plot->axisRects()) {
            for (QCPAxis* axis : rect->axes())
                if (axis->visible() && axis->tickLabels())
                    check(name + QStringLiteral(" tick labels"), axis->tickLabelFont());
            if (rect->width() < kPlotWidth || rect->height() < kPlotHeight)
                out += QStringLiteral("\n  %1: plot area %2×%3")
                           .arg(name)
                           .arg(rect->width())
                           .arg(rect->height());
        }
        if (plot->legend && plot->legend->visible())
            for (int i = 0; i < plot->legend->itemCount(); ++i)
                if (QCPAbstractLegendItem* item = plot->legend->item(i))
                    check(name + QStringLiteral(" legend"), item->font());
        for (int i = 0; i < plot->itemCount(); ++i)
            if (auto* t = qobject_cast<QCPItemText*>(plot->item(i)); t && t->visible())
                check(name + QStringLiteral(" label \"") + t->text() + QLatin1Char('"'), t->font());
    }
    return out;
}

void shoot(QWidget& window, const QString& name) {
    const QString dir = qEnvironmentVariable("SHARDSCOPE_PRESENT_SHOTS");
    if (!dir.isEmpty()) window.grab().save(QDir(dir).filePath(name + QStringLiteral(".png")));
}

} // namespace

class PresentationTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void languages_data() {
        QTest::addColumn<QString>("lang");
        QTest::newRow("en") << QStringLiteral("en");
        QTest::newRow("zh_CN") << QStringLiteral("zh_CN");
    }

    void everyPageFitsAProjector_data() { languages_data(); }
    void everyPageFitsAProjector() {
        QFETCH(QString, lang);
        Fixture f(lang);
        auto* ranks = qobject_cast<RanksPage*>(f.window.page(QStringLiteral("ranks")));
        const QString recording = f.dir.filePath(QStringLiteral("zero3.sstrace"));
        QVERIFY(QFile::copy(bundledRecording(QStringLiteral("zero3_tiny_4r.sstrace")), recording));
        QVERIFY(ranks->openRecording(recording));
        QTRY_VERIFY_WITH_TIMEOUT(!ranks->isBusy() && ranks->model().stepCount() > 0, 20000);
        auto* compare = qobject_cast<ComparePage*>(f.window.page(QStringLiteral("compare")));
        for (const char* name : {"ddp_tiny_4r.sstrace", "zero3_tiny_4r.sstrace"})
            compare->addReport(*bundledReport(QString::fromLatin1(name)));
        for (const QString& id : f.window.pageIds()) {
            QVERIFY(f.window.showPage(id));
            settle();
            QWidget* page = f.window.page(id);
            shoot(f.window, QStringLiteral("page-%1-%2").arg(id, lang));
            QCOMPARE(f.window.size(), kProjector);
            auto* scroll = f.window.findChild<QScrollArea*>(QStringLiteral("pageScroll_") + id);
            QVERIFY(scroll);
            QVERIFY2(scroll->horizontalScrollBar()->maximum() == 0,
                     qPrintable(id + QStringLiteral(" scrolls sideways: it asks for ") +
                                sizeText(page->minimumSizeHint()) + greedyChildren(page)));
            if (id == QStringLiteral("ranks"))
                QVERIFY2(ranks->rankView()->plotArea().height() >= kLedgerBars,
                         qPrintable(QStringLiteral("the bars are %1 px high")
                                        .arg(ranks->rankView()->plotArea().height())));
            const QString small = smallWidgetText(page) + smallChartText(page);
            QVERIFY2(small.isEmpty(), qPrintable(id + QStringLiteral(":") + small));
        }
        // Leaving gives every widget its own font back.
        const QFont ranksTitle = f.window.findChild<QLabel*>(QStringLiteral("runTitle"))->font();
        f.window.presentation().setPresenting(false);
        QVERIFY(QFontInfo(QApplication::font()).pixelSize() < kFloor);
        QVERIFY(
            QFontInfo(f.window.findChild<QLabel*>(QStringLiteral("runTitle"))->font()).pixelSize() <
            QFontInfo(ranksTitle).pixelSize());
        QVERIFY(f.window.findChild<QWidget*>(QStringLiteral("pageList"))->isVisible());
        // A chart's texts made while presenting (the comparison's legend) are made again.
        compare->view()->ledgerPlot()->replot(QCustomPlot::rpImmediateRefresh);
        QCPLegend* legend = compare->view()->ledgerPlot()->legend;
        QVERIFY(legend->itemCount() > 0);
        QVERIFY2(QFontInfo(legend->item(0)->font()).pixelSize() < kFloor,
                 qPrintable(QString::number(QFontInfo(legend->item(0)->font()).pixelSize())));
    }

    void everyLessonStepFitsAProjector_data() { languages_data(); }
    void everyLessonStepFitsAProjector() {
        QFETCH(QString, lang);
        Fixture f(lang);
        LessonPlayer* player = f.player();
        QVERIFY(player);
        QWidget* bar = f.window.lessonBar();
        for (const auto& lesson : player->library().lessons) {
            const QString id = QString::fromStdString(lesson.id);
            for (std::size_t k = 0; k < lesson.steps.size(); ++k) {
                const QString where = id + QStringLiteral(" step ") + QString::number(k + 1);
                QVERIFY(player->start(id, static_cast<int>(k)));
                QVERIFY2(player->waitUntilSettled(30000), qPrintable(where));
                settle();
                shoot(f.window, QStringLiteral("lesson-%1-%2-%3").arg(id).arg(k + 1).arg(lang));
                QCOMPARE(f.window.size(), kProjector);
                // The card is the bar under the pages, its text at the body's size.
                QCOMPARE(player->panel()->parentWidget(), bar);
                QVERIFY(player->panel()->isVisible());
                const QString small = smallWidgetText(bar);
                QVERIFY2(small.isEmpty(), qPrintable(where + small));
                if (QWidget* target = player->highlighted()) {
                    const QRect barRect(bar->mapTo(&f.window, QPoint(0, 0)), bar->size());
                    // Whole, not cut by the page's scrolling or the window's edge; one taller
                    // than the page's room shows from its top and fills that room.
                    const QRect shown = target->visibleRegion().boundingRect();
                    const QWidget* viewport = target->parentWidget();
                    for (const QWidget* p = target->parentWidget(); p; p = p->parentWidget())
                        if (auto* scroll = qobject_cast<const QScrollArea*>(p)) {
                            viewport = scroll->viewport(); // the innermost: the one it scrolls in
                            break;
                        }
                    const bool whole = shown == target->rect();
                    const bool fills =
                        shown.top() == 0 &&
                        shown.height() >= std::min(target->height(), viewport->height()) - 4;
                    QVERIFY2(whole || (target->height() > viewport->height() && fills),
                             qPrintable(where + QStringLiteral(": %1 shows %2 of %3")
                                                    .arg(target->objectName(), rectText(shown),
                                                         rectText(target->rect()))));
                    const QRect drawn(target->mapTo(&f.window, shown.topLeft()), shown.size());
                    QVERIFY2(!drawn.intersects(barRect), qPrintable(where));
                    if (!qobject_cast<QAbstractButton*>(target))
                        QVERIFY2(target->width() >= 300 && target->height() >= 150,
                                 qPrintable(where + QStringLiteral(": ") + target->objectName() +
                                            QStringLiteral(" is ") + sizeText(target->size())));
                    // The diagrams lay their texts out by the font: room for them at 20 px.
                    if (auto* flow = qobject_cast<FlowView*>(target))
                        QVERIFY2(flow->height() >= flow->minimumSizeHint().height(),
                                 qPrintable(where + QStringLiteral(": the flow view is %1 px high, "
                                                                   "its texts need %2")
                                                        .arg(flow->height())
                                                        .arg(flow->minimumSizeHint().height())));
                    if (auto* timeline = qobject_cast<TimelineView*>(target)) {
                        const QFontMetrics fm(timeline->font());
                        const TimelineGeometry g = timeline->geometry();
                        QVERIFY2(
                            g.legend.height() >= fm.height() && g.axis.height() >= fm.height() &&
                                g.legend.bottom() < timeline->height() &&
                                g.plot.left() >= QFontMetrics(timeline->font())
                                                     .horizontalAdvance(QStringLiteral("rank 0")),
                            qPrintable(where + QStringLiteral(": the timeline's legend %1, axis "
                                                              "%2 for %3 px text")
                                                   .arg(rectText(g.legend), rectText(g.axis))
                                                   .arg(fm.height())));
                    }
                    if (auto* ledger = qobject_cast<RankLedgerView*>(target))
                        QVERIFY2(ledger->plotArea().height() >= kLedgerBars,
                                 qPrintable(where + QStringLiteral(": the bars are %1 px high")
                                                        .arg(ledger->plotArea().height())));
                    const QString charts = smallChartText(target->parentWidget());
                    QVERIFY2(charts.isEmpty(), qPrintable(where + charts));
                }
            }
            player->close();
        }
    }
};

QTEST_MAIN(PresentationTest)
#include "presentation_test.moc"
