// The one palette: memory categories, activities and ranks/strategies come from disjoint hue
// families, so no colour means two things on two pages; every page says which families it uses.
#include "calculator/calculator_page.h"
#include "common/category_palette.h"
#include "common/palette_legend.h"
#include "compare/compare_page.h"
#include "flows/flow_page.h"
#include "ranks/ranks_page.h"
#include "run/run_document.h"
#include "timeline/timeline_page.h"

#include <QTest>
#include <set>

using namespace shardscope;
using namespace shardscope::widgets;

namespace {

bool hueIn(int hue, std::pair<int, int> range) {
    const auto [lo, hi] = range;
    return lo <= hi ? hue >= lo && hue <= hi : hue >= lo || hue <= hi;
}

constexpr ColorFamily kFamilies[] = {ColorFamily::Memory, ColorFamily::Activities,
                                     ColorFamily::Ranks, ColorFamily::Transfers};

} // namespace

class PaletteTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void everyColourLiesInItsFamilysHues() {
        for (ColorFamily f : kFamilies)
            for (const QColor& c : familyColors(f)) {
                QVERIFY2(c.hsvHue() >= 0, qPrintable(c.name() + QStringLiteral(" has no hue")));
                QVERIFY2(hueIn(c.hsvHue(), familyHues(f)),
                         qPrintable(c.name() + QStringLiteral(" outside ") + familyName(f)));
            }
    }

    void familiesNeverShareAHue() {
        for (ColorFamily a : kFamilies)
            for (ColorFamily b : kFamilies) {
                if (a == b) continue;
                for (const QColor& c : familyColors(a))
                    QVERIFY2(!hueIn(c.hsvHue(), familyHues(b)),
                             qPrintable(c.name() + QStringLiteral(" of ") + familyName(a) +
                                        QStringLiteral(" lies in ") + familyName(b)));
            }
    }

    void membersAreDistinct() {
        std::set<QRgb> seen;
        for (Category c : kAllCategories)
            QVERIFY(seen.insert(categoryColor(c).rgb()).second);
        for (Tier t : kAllTiers)
            QVERIFY(seen.insert(tierColor(t).rgb()).second);
        for (std::size_t a = 0; a < kActivityCount; ++a)
            QVERIFY(seen.insert(activityColor(static_cast<Activity>(a)).rgb()).second);
        for (int s = 0; s < 7; ++s)
            QVERIFY(seen.insert(strategyColor(s).rgb()).second);
        for (std::size_t t = 1; t < kTransferCount; ++t)
            QVERIFY(seen.insert(transferColor(static_cast<Transfer>(t)).rgb()).second);
    }

    // Transfers on the timeline are drawn in the transfer family, never an activity's colour.
    void transferSpansUseTheTransferFamily() {
        for (std::size_t k = 0; k < replay::kSpanKindCount; ++k) {
            const auto kind = static_cast<replay::SpanKind>(k);
            const bool inFamily =
                hueIn(spanKindColor(kind).hsvHue(), familyHues(ColorFamily::Transfers));
            QCOMPARE(inFamily, replay::isTransfer(kind));
        }
    }

    // The defect: #4c78a8 was a parameter shard on Ranks and forward on the Timeline.
    void timelineAndLedgerNeverAgree() {
        for (std::size_t k = 0; k < replay::kSpanKindCount; ++k) {
            const auto kind = static_cast<replay::SpanKind>(k);
            if (kind == replay::SpanKind::ParamFull) {
                QCOMPARE(spanKindColor(kind),
                         categoryColor(Category::ParamFull)); // a gathered unit is param_full
                continue;
            }
            for (Category c : kAllCategories)
                QVERIFY(spanKindColor(kind) != categoryColor(c));
        }
    }

    void everyPageNamesItsFamilies() {
        RunDocument document;
        CalculatorPage calculator;
        RanksPage ranks(document);
        TimelinePage timeline(document);
        FlowPage flows(document);
        ComparePage compare;
        for (QWidget* page :
             std::initializer_list<QWidget*>{&calculator, &ranks, &timeline, &flows, &compare}) {
            const auto legends = page->findChildren<PaletteLegend*>();
            QCOMPARE(legends.size(), 1);
            QVERIFY(!legends.front()->families().empty());
            for (ColorFamily f : legends.front()->families())
                QVERIFY(legends.front()->text().contains(familyName(f).toHtmlEscaped()));
        }
    }
};

QTEST_MAIN(PaletteTest)
#include "palette_test.moc"
