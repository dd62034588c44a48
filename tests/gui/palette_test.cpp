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
#include <algorithm>
#include <array>
#include <cmath>
#include <set>
#include <vector>

using namespace shardscope;
using namespace shardscope::widgets;

namespace {

bool hueIn(int hue, std::pair<int, int> range) {
    const auto [lo, hi] = range;
    return lo <= hi ? hue >= lo && hue <= hi : hue >= lo || hue <= hi;
}

constexpr ColorFamily kFamilies[] = {ColorFamily::Memory, ColorFamily::Activities,
                                     ColorFamily::Ranks, ColorFamily::Transfers};

// Colour difference a class can see: CIE76 ΔE in CIELAB (D65). About 2 is the least a trained eye
// sees side by side; neighbours on a chart read as "the same colour" well below 20.
std::array<double, 3> toLab(const QColor& c) {
    const auto lin = [](double v) {
        return v <= 0.04045 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4);
    };
    const double r = lin(c.redF()), g = lin(c.greenF()), b = lin(c.blueF());
    const double x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047;
    const double y = 0.2126 * r + 0.7152 * g + 0.0722 * b;
    const double z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883;
    const auto f = [](double t) { return t > 0.008856 ? std::cbrt(t) : 7.787 * t + 16.0 / 116.0; };
    return {116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))};
}

double deltaE(const QColor& a, const QColor& b) {
    const auto la = toLab(a), lb = toLab(b);
    return std::hypot(la[0] - lb[0], la[1] - lb[1], la[2] - lb[2]);
}

// How a viewer with full deuteranopia or protanopia sees a colour (Machado, Oliveira and Fernandes
// 2009, severity 1, in linear RGB).
enum class Vision { Normal, Deutan, Protan };
QColor seenWith(const QColor& c, Vision v) {
    if (v == Vision::Normal) return c;
    static constexpr double kDeutan[3][3] = {{0.367322, 0.860646, -0.227968},
                                             {0.280085, 0.672501, 0.047413},
                                             {-0.011820, 0.042940, 0.968881}};
    static constexpr double kProtan[3][3] = {{0.152286, 1.052583, -0.204868},
                                             {0.114503, 0.786281, 0.099216},
                                             {-0.003882, -0.048116, 1.051998}};
    const auto& m = v == Vision::Deutan ? kDeutan : kProtan;
    const auto lin = [](double x) {
        return x <= 0.04045 ? x / 12.92 : std::pow((x + 0.055) / 1.055, 2.4);
    };
    const auto gamma = [](double x) {
        x = std::clamp(x, 0.0, 1.0);
        return x <= 0.0031308 ? 12.92 * x : 1.055 * std::pow(x, 1 / 2.4) - 0.055;
    };
    const double in[3] = {lin(c.redF()), lin(c.greenF()), lin(c.blueF())};
    double out[3];
    for (int i = 0; i < 3; ++i)
        out[i] = gamma(m[i][0] * in[0] + m[i][1] * in[1] + m[i][2] * in[2]);
    return QColor::fromRgbF(static_cast<float>(out[0]), static_cast<float>(out[1]),
                            static_cast<float>(out[2]));
}

// The closest pair of `colors` as `v` sees them, named.
std::pair<double, QString> closest(const std::vector<QColor>& colors, Vision v) {
    std::pair<double, QString> worst{1e9, QString()};
    for (std::size_t i = 0; i < colors.size(); ++i)
        for (std::size_t j = i + 1; j < colors.size(); ++j) {
            const double d = deltaE(seenWith(colors[i], v), seenWith(colors[j], v));
            if (d < worst.first)
                worst = {d, colors[i].name() + QStringLiteral(" / ") + colors[j].name()};
        }
    return worst;
}

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

    // The colours drawn side by side on one chart — the seven strategies (Compare, the
    // Calculator's curves), the activities (the Timeline's bars) — a class can tell apart from the
    // back of a room, and so can a viewer with red-green colour blindness. (It failed on the
    // violets: FSDP grad-op and hybrid ΔE 14, ZeRO-1 and ZeRO-2 ΔE 4 to a protanope; backward
    // and reduce-scatter ΔE 3 to a deuteranope.)
    void neighboursStayApartAlsoForColourBlindViewers() {
        std::vector<QColor> strategies, activities;
        for (int s = 0; s < 7; ++s)
            strategies.push_back(strategyColor(s));
        for (std::size_t a = 0; a < kActivityCount; ++a)
            activities.push_back(activityColor(static_cast<Activity>(a)));
        for (const auto& [name, colors] : {std::pair{QStringLiteral("strategies"), strategies},
                                           std::pair{QStringLiteral("activities"), activities}})
            for (const auto& [vision, least] :
                 {std::pair{Vision::Normal, 20.0}, std::pair{Vision::Deutan, 12.0},
                  std::pair{Vision::Protan, 12.0}}) {
                const auto [d, pair] = closest(colors, vision);
                QVERIFY2(d >= least, qPrintable(QStringLiteral("%1: %2 ΔE %3 (vision %4)")
                                                    .arg(name, pair)
                                                    .arg(d, 0, 'f', 1)
                                                    .arg(static_cast<int>(vision))));
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
