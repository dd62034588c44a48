#include "compare/compare_view.h"

#include "common/byte_format.h"
#include "common/category_palette.h"
#include "common/flow_layout.h"
#include "common/plot_setup.h"
#include "common/qcustomplot.h"
#include "common/run_labels.h"
#include "common/side_column.h"
#include "common/theory_names.h"
#include "core/error.h"
#include "plan/collective.h"
#include "replay/compare_data.h"
#include "replay/timeline_index.h"

#include <QEvent>
#include <QFile>
#include <QLabel>
#include <QSplitter>
#include <QVBoxLayout>
#include <algorithm>

namespace shardscope::widgets {
namespace {

struct AxisUnit {
    double scale;
    QString name;
};
AxisUnit unitFor(double maxBytes) {
    if (maxBytes >= 1e9) return {1e9, QStringLiteral("GB")};
    if (maxBytes >= 1e6) return {1e6, QStringLiteral("MB")};
    if (maxBytes >= 1e3) return {1e3, QStringLiteral("kB")};
    return {1, QStringLiteral("B")};
}

QString strategyText(const std::string& name) {
    if (const auto s = strategyFromName(name)) return strategyShortLabel(*s);
    return QString::fromStdString(name);
}

QColor colorOf(const std::string& name) {
    const auto s = strategyFromName(name);
    return strategyColor(s ? static_cast<int>(*s) : 0);
}

QCustomPlot* makePlot(QWidget* parent) {
    auto* plot = new QCustomPlot(parent);
    plot->setMinimumSize(280, 160); // the badge rows above may wrap; the page still fits 700 px
    plot->setFocusPolicy(Qt::ClickFocus); // the clicked chart is the one File → Export saves
    // x = 0 is the first bar's centre here, not an origin: its solid zero line read as a
    // needle sticking out of that bar.
    plot->xAxis->grid()->setZeroLinePen(Qt::NoPen);
    plot->plotLayout()->insertRow(0);
    plot->plotLayout()->addElement(
        0, 0, new QCPTextElement(plot, QString(), QFont(parent->font().family(), 10, QFont::Bold)));
    // The legend wraps to the plot's width (as every chart's): seven strategies' entries are
    // neither cut at the edge nor drawn over each other.
    placeLegendBelow(plot, QSize(14, 10), 1.0);
    return plot;
}

void reset(QCustomPlot* plot) {
    plot->clearPlottables();
    plot->clearItems();
    plot->clearGraphs();
}

QCPGraph* markers(QCustomPlot* plot, const QString& name, const QColor& c,
                  QCPScatterStyle::ScatterShape shape) {
    QCPGraph* g = plot->addGraph();
    g->setName(name);
    g->setLineStyle(QCPGraph::lsNone);
    g->setScatterStyle(QCPScatterStyle(shape, c.darker(130), c, 9));
    g->setPen(QPen(c.darker(130)));
    return g;
}

} // namespace

CompareView::CompareView(QWidget* parent) : QWidget(parent) {
    header_ = new QLabel(this);
    header_->setWordWrap(true);
    putAwayWhilePresenting(header_); // the configuration's details; the charts need the height
    auto* badgesRow = new QWidget(this);
    badgesRow->setObjectName(QStringLiteral("compareBadgesRow"));
    badges_ = new FlowLayout(badgesRow);
    badgesTitle_ = new QLabel(badgesRow);
    badges_->addWidget(badgesTitle_);
    exposedRow_ = new QWidget(this);
    exposedRow_->setObjectName(QStringLiteral("compareExposedRow"));
    exposed_ = new FlowLayout(exposedRow_);
    exposedTitle_ = new QLabel(exposedRow_);
    exposed_->addWidget(exposedTitle_);
    ledger_ = makePlot(this);
    ledger_->setObjectName(QStringLiteral("compareLedgerPlot"));
    peak_ = makePlot(this);
    peak_->setObjectName(QStringLiteral("comparePeakPlot"));
    comm_ = makePlot(this);
    comm_->setObjectName(QStringLiteral("compareCommPlot"));
    auto* lower = new QSplitter(Qt::Horizontal, this);
    lower->addWidget(peak_);
    lower->addWidget(comm_);
    auto* split = new QSplitter(Qt::Vertical, this);
    split->addWidget(ledger_);
    split->addWidget(lower);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    charts_ = split;
    empty_ = new QLabel(this);
    empty_->setObjectName(QStringLiteral("compareEmpty"));
    empty_->setAlignment(Qt::AlignCenter);
    empty_->setWordWrap(true);
    empty_->setStyleSheet(QStringLiteral("color: palette(placeholder-text); padding: 24px;"));
    QFont larger = empty_->font();
    larger.setPointSizeF(12);
    empty_->setFont(larger);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(header_);
    layout->addWidget(badgesRow);
    layout->addWidget(exposedRow_);
    layout->addWidget(split, 1);
    layout->addWidget(empty_, 1);
    rebuild();
}

void CompareView::setRuns(std::vector<report::RunReport> runs) {
    runs_ = std::move(runs);
    rebuild();
}

bool CompareView::loadFile(const QString& path, QString* error) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) {
        if (error) *error = tr("cannot read %1: %2").arg(path, f.errorString());
        return false;
    }
    try {
        setRuns(replay::parseCompareRuns(f.readAll().toStdString()));
    } catch (const Error& e) {
        if (error) *error = tr("%1: %2").arg(path, QString::fromUtf8(e.what()));
        return false;
    }
    return true;
}

QString CompareView::parityText(const replay::Parity& p) {
    switch (p.kind) {
    case replay::Parity::Kind::Reference:
        return tr("reference (DDP)");
    case replay::Parity::Kind::BitwiseEqual:
        return tr("bitwise equal to DDP");
    case replay::Parity::Kind::Delta:
        return tr("max |Δ| vs DDP = %1").arg(p.delta, 0, 'g', 3);
    case replay::Parity::Kind::DigestEqual:
        return tr("bitwise equal to DDP (same weight digest)");
    case replay::Parity::Kind::DigestDiffers:
        return tr("weights differ from DDP (digest)");
    case replay::Parity::Kind::NoReference:
        return tr("no DDP run to compare with");
    case replay::Parity::Kind::NoComparableReference:
        return tr("no DDP run of the same configuration");
    }
    return {};
}

QString CompareView::exposedExplanation() {
    return exposedCommExplanation();
}

QStringList CompareView::exposedTexts() const {
    QStringList out;
    for (const QLabel* l : exposedLabels_)
        out << l->text();
    return out;
}

QStringList CompareView::exposedToolTips() const {
    QStringList out;
    for (const QLabel* l : exposedLabels_)
        out << l->toolTip();
    return out;
}

QString CompareView::headerText() const {
    return header_->text();
}

// The strategy's colour; a strategy's second, third … run (another mesh) alternately darker and
// lighter, so its bars stay apart.
QColor CompareView::runColor(std::size_t i) const {
    const QColor base = colorOf(runs_[i].strategy);
    int earlier = 0;
    for (std::size_t j = 0; j < i; ++j)
        earlier += runs_[j].strategy == runs_[i].strategy ? 1 : 0;
    if (earlier == 0) return base;
    const int step = 100 + 30 * ((earlier + 1) / 2);
    return earlier % 2 == 1 ? base.darker(step) : base.lighter(step);
}

QString CompareView::runLabel(std::size_t i, QChar beforeMesh) const {
    // Runs of one strategy on different meshes are told apart by their mesh (P × T × D).
    QString name = strategyText(runs_[i].strategy);
    const replay::Mesh m = replay::meshOf(runs_[i]);
    const int t = m.tensorParallel, pp = m.pipeParallel;
    if (t > 1 || pp > 1) {
        QStringList mesh;
        if (pp > 1) mesh << tr("P%1").arg(pp);
        if (t > 1) mesh << tr("T%1").arg(t);
        mesh << tr("D%1").arg(runs_[i].worldSize / (t * pp));
        name += beforeMesh + mesh.join(QStringLiteral("×"));
    }
    if (groupCount_ <= 1 || i >= groupOf_.size()) return name;
    return tr("%1 (%2)").arg(name, QChar(u'A' + groupOf_[i] % 26));
}

QString CompareView::configurationText(const report::RunReport& r) {
    QString text = tr("model %1 on %2 ranks, %3 steps, seed %4")
                       .arg(QString::fromStdString(r.model))
                       .arg(r.worldSize)
                       .arg(r.steps)
                       .arg(r.seed);
    if (!r.precision.empty()) text += QStringLiteral(", ") + QString::fromStdString(r.precision);
    if (!r.data.empty() && r.data != "synthetic")
        text += tr(", data %1").arg(QString::fromStdString(r.data));
    if (r.microBatch != 1 || r.gradAccum != 1)
        text += tr(", micro-batch %1 × %2 accumulated").arg(r.microBatch).arg(r.gradAccum);
    return text;
}

QStringList CompareView::badgeTexts() const {
    QStringList out;
    for (const QLabel* l : badgeLabels_)
        out << l->text();
    return out;
}

void CompareView::setPresenting(bool on) {
    // Legend entries and labels made while presenting copied the large text: made again.
    if (!on) rebuild();
    const int total = charts_->orientation() == Qt::Vertical ? charts_->height() : 0;
    const int h = std::max(total, 2);
    charts_->setSizes(on ? QList<int>{h / 2, h - h / 2} : QList<int>{h * 3 / 5, h - h * 3 / 5});
}

QString CompareView::emptyText() const {
    return tr("Nothing to compare yet.\n\nPress Run in the “Run all strategies” row above to train "
              "DDP, ZeRO-1, ZeRO-2, ZeRO-3 and FSDP "
              "on the same model and see their memory, peaks, communication and final weights side "
              "by side, "
              "open reports with “Open reports…” (shardscope-cli compare --json FILE, or "
              "several run --json files), or add the run the Ranks page shows with “Add the "
              "Ranks page's run”.");
}

void CompareView::rebuild() {
    const auto groups = replay::configurationGroups(runs_);
    groupCount_ = static_cast<int>(groups.size());
    groupOf_.assign(runs_.size(), 0);
    for (std::size_t g = 0; g < groups.size(); ++g)
        for (std::size_t i : groups[g])
            groupOf_[i] = static_cast<int>(g);
    charts_->setVisible(!runs_.empty());
    empty_->setVisible(runs_.empty());
    empty_->setText(emptyText());
    if (runs_.empty()) {
        header_->setText(tr("Compare: open a compare report (shardscope-cli compare --json FILE) "
                            "or several run reports."));
    } else if (groups.size() == 1) {
        header_->setText(
            tr("Runs: %1 · %2. Bars: measured; ◆ and lines: the theory for the same configuration.")
                .arg(runs_.size())
                .arg(configurationText(runs_.front())));
    } else {
        // Never one model for a mixed set: each configuration is named, and badges stay inside one.
        QStringList lines;
        for (std::size_t g = 0; g < groups.size(); ++g) {
            QStringList names;
            for (std::size_t i : groups[g])
                names << strategyText(runs_[i].strategy);
            lines << tr("(%1) %2: %3")
                         .arg(QChar(u'A' + static_cast<int>(g) % 26))
                         .arg(configurationText(runs_[groups[g].front()]),
                              names.join(QStringLiteral(", ")));
        }
        header_->setText(
            tr("Runs: %1 in %2 configurations; weights are compared only within one configuration.")
                .arg(runs_.size())
                .arg(groups.size()) +
            QLatin1Char('\n') + lines.join(QLatin1Char('\n')));
    }
    buildBadges();
    buildExposed();
    buildLedger();
    buildPeak();
    buildComm();
}

void CompareView::buildBadges() {
    for (QLabel* l : badgeLabels_)
        l->deleteLater();
    badgeLabels_.clear();
    badgesTitle_->setText(tr("Final weights:"));
    badgesTitle_->setVisible(!runs_.empty());
    int at = 1; // after the title
    for (std::size_t i = 0; i < runs_.size(); ++i) {
        const report::RunReport& r = runs_[i];
        const replay::Parity p = replay::parityOf(r, runs_);
        auto* l = new QLabel(runLabel(i) + QStringLiteral(": ") + parityText(p), this);
        const bool good = p.kind == replay::Parity::Kind::BitwiseEqual ||
                          p.kind == replay::Parity::Kind::DigestEqual ||
                          p.kind == replay::Parity::Kind::Reference;
        const bool warn = p.kind == replay::Parity::Kind::DigestDiffers ||
                          (p.kind == replay::Parity::Kind::Delta && p.delta > 1e-3);
        const QString bg = good   ? QStringLiteral("#dff0d8")
                           : warn ? QStringLiteral("#f8d7da")
                                  : QStringLiteral("#fff3cd");
        l->setStyleSheet(
            QStringLiteral(
                "QLabel{background:%1;border:1px solid %2;border-radius:8px;padding:2px 8px;}")
                .arg(bg, colorOf(r.strategy).name()));
        l->setToolTip(tr("Final fp32 master weights of %1 against those of a DDP run of the same "
                         "configuration (%2). Digest %3.")
                          .arg(strategyText(r.strategy), configurationText(r),
                               QString::fromStdString(r.paramDigest)));
        badges_->insertWidget(at++, l);
        badgeLabels_.push_back(l);
    }
}

void CompareView::buildExposed() {
    for (QLabel* l : exposedLabels_)
        l->deleteLater();
    exposedLabels_.clear();
    exposedRow_->setVisible(!runs_.empty());
    exposedTitle_->setText(tr("Exposed communication (worst rank, median step):"));
    exposedTitle_->setToolTip(
        QStringLiteral("<p>%1</p>").arg(exposedExplanation().toHtmlEscaped()));
    int at = 1; // after the title
    for (std::size_t i = 0; i < runs_.size(); ++i) {
        const report::RunReport& r = runs_[i];
        const QString text = runLabel(i) + QStringLiteral(" ") + percentText(r.exposedCommFraction);
        const int worst = replay::exposedRank(r);
        QString detail =
            worst >= 0
                ? tr("%1: rank %2 waits most, %3 of its step (median over the steps).")
                      .arg(strategyText(r.strategy))
                      .arg(worst)
                      .arg(percentText(r.exposedCommFraction))
                : tr("%1: %2 of the step for the rank that waits most (median over the steps).")
                      .arg(strategyText(r.strategy), percentText(r.exposedCommFraction));
        QStringList perRank;
        for (const report::RankReport& rk : r.ranks)
            perRank << tr("r%1 %2").arg(rk.rank).arg(percentText(rk.exposedComm.fractionMedian));
        if (!perRank.isEmpty())
            detail +=
                QLatin1Char(' ') + tr("Per rank: %1.").arg(perRank.join(QStringLiteral(", ")));
        // Rich text, so the tooltip wraps instead of running off the screen.
        const QString tip = QStringLiteral("<p>%1</p><p>%2</p>")
                                .arg(exposedExplanation().toHtmlEscaped(), detail.toHtmlEscaped());
        auto* l = new QLabel(text, exposedRow_);
        l->setObjectName(QStringLiteral("exposed_%1").arg(QString::fromStdString(r.strategy)));
        l->setStyleSheet(
            QStringLiteral(
                "QLabel{background:#eef2f7;border:1px solid %1;border-radius:8px;padding:2px 8px;}")
                .arg(colorOf(r.strategy).name()));
        l->setToolTip(tip);
        exposed_->insertWidget(at++, l);
        exposedLabels_.push_back(l);
    }
}

// x layout of the ledger chart: strategy groups of N ranks, one empty slot between groups.
void CompareView::buildLedger() {
    reset(ledger_);
    setPlotTitle(ledger_,
                 tr("Rank ledgers: model states per rank by category, grouped by strategy"));
    double maxBytes = 1;
    for (const auto& r : runs_)
        for (const auto& rk : r.ranks)
            maxBytes = std::max(maxBytes, static_cast<double>(rk.peakTotal));
    const AxisUnit u = unitFor(maxBytes);
    setAxisTitle(ledger_->yAxis, tr("bytes per rank (%1)").arg(u.name), u.name);
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    std::vector<double> xs;
    std::vector<std::pair<const report::RunReport*, const report::RankReport*>> columns;
    double x = 0;
    for (std::size_t i = 0; i < runs_.size(); ++i) {
        const report::RunReport& r = runs_[i];
        for (const report::RankReport& rk : r.ranks) {
            // The run's name on the second line, under r0: the other ranks' ticks leave that line
            // free, so a long name ("ZeRO-3 P2×T2×D2") never runs into r1.
            ticker->addTick(x, rk.rank == 0
                                   ? tr("r%1").arg(rk.rank) + QStringLiteral("\n") + runLabel(i)
                                   : tr("r%1").arg(rk.rank));
            xs.push_back(x);
            columns.emplace_back(&r, &rk);
            x += 1;
        }
        x += 1;
    }
    QCPBars* below = nullptr;
    for (Category c : categoryStackOrder()) {
        QVector<double> keys, values;
        bool any = false;
        for (std::size_t i = 0; i < columns.size(); ++i) {
            const double v =
                static_cast<double>(columns[i].second->modelStateBytes[index(c)]) / u.scale;
            any = any || v > 0;
            keys << xs[i];
            values << v;
        }
        if (!any) continue;
        auto* bars = new QCPBars(ledger_->xAxis, ledger_->yAxis);
        bars->setName(categoryLabel(c));
        bars->setData(keys, values);
        bars->setWidth(0.7);
        bars->setPen(Qt::NoPen);
        bars->setBrush(categoryColor(c));
        if (below) bars->moveAbove(below);
        below = bars;
    }
    QCPGraph* peaks =
        markers(ledger_, tr("measured peak"), neutralColor(40), QCPScatterStyle::ssDiamond);
    QCPGraph* theory =
        markers(ledger_, tr("theory: model states"), neutralColor(140), QCPScatterStyle::ssDisc);
    theory->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssNone));
    for (std::size_t i = 0; i < columns.size(); ++i) {
        peaks->addData(xs[i], static_cast<double>(columns[i].second->peakTotal) / u.scale);
        // A pipelined run's rank against its own stage's theory (the stages hold other units).
        const double sum = static_cast<double>(
            report::stateTotal(columns[i].first->theoryModelStatesOf(columns[i].second->rank)));
        // A short horizontal dash over the bar; NaN breaks the line between bars.
        theory->addData(xs[i] - 0.4, sum / u.scale);
        theory->addData(xs[i] + 0.4, sum / u.scale);
        theory->addData(xs[i] + 0.45, qQNaN());
    }
    theory->setLineStyle(QCPGraph::lsLine);
    theory->setPen(QPen(neutralColor(140), 2));
    ledger_->xAxis->setTicker(ticker);
    ledger_->xAxis->setRange(-0.8, std::max(x - 1.2, 1.0)); // x ran one gap past the last group
    ledger_->yAxis->setRange(0, maxBytes / u.scale * 1.12);
    fitLegendToWidth(ledger_);
    ledger_->replot();
}

void CompareView::buildPeak() {
    reset(peak_);
    setPlotTitle(peak_, tr("Peak bytes per rank"));
    double maxBytes = 1;
    int ranks = 1;
    for (const auto& r : runs_) {
        maxBytes = std::max({maxBytes, static_cast<double>(r.peakMax()),
                             static_cast<double>(r.theory.predictedPeakBytes)});
        ranks = std::max(ranks, static_cast<int>(r.ranks.size()));
    }
    const AxisUnit u = unitFor(maxBytes);
    setAxisTitle(peak_->yAxis, tr("peak (%1)").arg(u.name), u.name);
    setAxisTitle(peak_->xAxis, tr("rank"));
    auto* group = new QCPBarsGroup(peak_);
    const double width = 0.8 / std::max<std::size_t>(runs_.size(), 1);
    for (std::size_t i = 0; i < runs_.size(); ++i) {
        const report::RunReport& r = runs_[i];
        auto* bars = new QCPBars(peak_->xAxis, peak_->yAxis);
        bars->setName(runLabel(i));
        for (const report::RankReport& rk : r.ranks)
            bars->addData(rk.rank, static_cast<double>(rk.peakTotal) / u.scale);
        bars->setWidth(width);
        bars->setPen(Qt::NoPen);
        bars->setBrush(runColor(i));
        bars->setBarsGroup(group);
        if (r.theory.predictedPeakBytes > 0) {
            // Each rank's prediction across its slot (a pipeline's stages predict their own
            // peaks); NaN between slots.
            QCPGraph* line = peak_->addGraph();
            line->setPen(QPen(runColor(i), 1.5, Qt::DashLine));
            for (const report::RankReport& rk : r.ranks) {
                const double y = static_cast<double>(r.predictedPeakOf(rk.rank)) / u.scale;
                line->addData(rk.rank - 0.49, y);
                line->addData(rk.rank + 0.49, y);
                line->addData(rk.rank + 0.5, qQNaN());
            }
            line->removeFromLegend(); // one entry for all: the dash in the run's own colour
        }
    }
    if (peak_->graphCount() > 0) {
        QCPGraph* key = peak_->addGraph(); // no data: the legend's "theory" entry
        key->setName(tr("theory: dashed, in the run's colour"));
        key->setPen(QPen(neutralColor(110), 1.5, Qt::DashLine));
    }
    auto ticker = QSharedPointer<QCPAxisTickerFixed>::create();
    ticker->setTickStep(1);
    peak_->xAxis->setTicker(ticker);
    peak_->xAxis->setRange(-0.6, ranks - 0.4);
    peak_->yAxis->setRange(0, maxBytes / u.scale * 1.15);
    fitLegendToWidth(peak_);
    peak_->replot();
}

void CompareView::buildComm() {
    reset(comm_);
    setPlotTitle(comm_, tr("Communication per rank per step"));
    double maxBytes = 1;
    for (const auto& r : runs_)
        maxBytes = std::max({maxBytes, report::total(r.commBytesPerStep),
                             report::total(r.theory.commBytesPerStep)});
    const AxisUnit u = unitFor(maxBytes);
    setAxisTitle(comm_->yAxis, tr("bytes sent (%1)").arg(u.name), u.name);
    auto ticker = QSharedPointer<QCPAxisTickerText>::create();
    for (std::size_t i = 0; i < runs_.size(); ++i)
        ticker->addTick(static_cast<double>(i), runLabel(i, QLatin1Char('\n')));
    QCPBars* below = nullptr;
    for (CollectiveOp op : plan::kCollectives) {
        const std::string name(collectiveOpName(op)); // the report's key
        const replay::SpanKind kind = replay::spanKindOf(op);
        QVector<double> keys, values;
        bool any = false;
        for (std::size_t i = 0; i < runs_.size(); ++i) {
            double v = 0;
            for (const auto& [k, b] : runs_[i].commBytesPerStep)
                if (k == name) v = b;
            any = any || v > 0;
            keys << static_cast<double>(i);
            values << v / u.scale;
        }
        if (!any) continue;
        auto* bars = new QCPBars(comm_->xAxis, comm_->yAxis);
        bars->setName(spanKindShortLabel(kind));
        bars->setData(keys, values);
        bars->setWidth(0.55);
        bars->setPen(Qt::NoPen);
        bars->setBrush(spanKindColor(kind));
        if (below) bars->moveAbove(below);
        below = bars;
    }
    QCPGraph* theory = markers(comm_, tr("theory"), neutralColor(140), QCPScatterStyle::ssDiamond);
    for (std::size_t i = 0; i < runs_.size(); ++i)
        if (!runs_[i].theory.commBytesPerStep.empty())
            theory->addData(static_cast<double>(i),
                            report::total(runs_[i].theory.commBytesPerStep) / u.scale);
    comm_->xAxis->setTicker(ticker);
    comm_->xAxis->setRange(-0.6, std::max<double>(static_cast<double>(runs_.size()) - 0.4, 0.6));
    comm_->yAxis->setRange(0, maxBytes / u.scale * 1.15);
    fitLegendToWidth(comm_);
    comm_->replot();
}

void CompareView::changeEvent(QEvent* event) {
    if (event->type() == QEvent::LanguageChange) rebuild();
    QWidget::changeEvent(event);
}

} // namespace shardscope::widgets
