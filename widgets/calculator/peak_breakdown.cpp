#include "calculator/peak_breakdown.h"

#include "common/byte_format.h"
#include "common/category_palette.h"
#include "common/run_labels.h"
#include "common/theory_names.h"
#include "plan/policy.h"

#include <QEvent>
#include <QHeaderView>
#include <QHelpEvent>
#include <QLabel>
#include <QPainter>
#include <QTableWidget>
#include <QToolTip>
#include <QVBoxLayout>
#include <algorithm>

namespace shardscope::widgets {

namespace {

std::uint64_t device(const ByteTable& t, Category c) {
    return t.at(c, Tier::Device);
}

// The colour a term is drawn in: the ledger category its bytes are.
Category categoryOf(PeakTermKind k) {
    switch (k) {
    case PeakTermKind::ModelStates:
        return Category::MasterFp32;
    case PeakTermKind::Activations:
        return Category::Activation;
    case PeakTermKind::Gathered:
        return Category::ParamFull;
    case PeakTermKind::GradsInFlight:
        return Category::GradFull;
    case PeakTermKind::Buffers:
        return Category::CommBuffer;
    case PeakTermKind::Workspace:
        return Category::Workspace;
    }
    return Category::Workspace;
}

// Without a shape the whole model is one unit (theory::closedFormPeak).
std::uint64_t largestUnitParams(const CalculatorResult& r) {
    if (!r.input.shape) return r.states.paramCount;
    std::uint64_t largest = 0;
    for (const auto& u : plan::unitParams(*r.input.shape))
        largest = std::max(largest, u.params);
    return largest;
}

} // namespace

std::vector<PeakTerm> peakTerms(const CalculatorResult& r) {
    if (!r.peak || r.peak->peakBytes == 0) return {};
    const ByteTable& at = r.peak->atPeak;
    const ByteTable& kept = r.states.perRank; // what stays between steps
    PeakTerm states{PeakTermKind::ModelStates, 0, {}};
    for (Category c : kAllCategories) {
        if (stateGroup(c) == StateGroup::Other) continue;
        std::uint64_t b = device(at, c);
        // Full parameters and gradients beyond what the strategy keeps are transient terms.
        if (c == Category::ParamFull || c == Category::GradFull) b = std::min(b, device(kept, c));
        states.parts.at(c, Tier::Device) = b;
        states.bytes += b;
    }
    std::vector<PeakTerm> out{states};
    const auto add = [&](PeakTermKind k, Category c, std::uint64_t bytes) {
        PeakTerm t{k, bytes, {}};
        t.parts.at(c, Tier::Device) = bytes;
        out.push_back(t);
    };
    add(PeakTermKind::Activations, Category::Activation, device(at, Category::Activation));
    add(PeakTermKind::Gathered, Category::ParamFull,
        device(at, Category::ParamFull) - states.parts.at(Category::ParamFull, Tier::Device));
    add(PeakTermKind::GradsInFlight, Category::GradFull,
        device(at, Category::GradFull) - states.parts.at(Category::GradFull, Tier::Device));
    add(PeakTermKind::Buffers, Category::CommBuffer, device(at, Category::CommBuffer));
    add(PeakTermKind::Workspace, Category::Workspace, device(at, Category::Workspace));
    return out;
}

// One horizontal bar, the terms side by side; the model-states term split by category.
class PeakBreakdown::Bar : public QWidget {
public:
    explicit Bar(PeakBreakdown* owner) : QWidget(owner), owner_(owner) {
        setMinimumHeight(34);
        setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
        setMouseTracking(true);
    }
    QSize sizeHint() const override { return {400, 40}; }

protected:
    void paintEvent(QPaintEvent*) override {
        QPainter p(this);
        const QRect area = rect().adjusted(1, 2, -1, -fontMetrics().height() - 4);
        p.fillRect(area, palette().color(QPalette::Base));
        segments_.clear();
        std::uint64_t total = 0;
        for (const PeakTerm& t : owner_->terms_)
            total += t.bytes;
        if (total == 0) return;
        double x = area.left();
        const QFontMetrics fm = fontMetrics();
        for (const PeakTerm& t : owner_->terms_) {
            const double w =
                area.width() * static_cast<double>(t.bytes) / static_cast<double>(total);
            double sx = x;
            for (Category c : categoryStackOrder()) {
                const std::uint64_t b = t.parts.at(c, Tier::Device);
                if (b == 0) continue;
                const double cw =
                    area.width() * static_cast<double>(b) / static_cast<double>(total);
                p.fillRect(QRectF(sx, area.top(), cw, area.height()), categoryColor(c));
                sx += cw;
            }
            const QRectF seg(x, area.top(), w, area.height());
            segments_.push_back({seg, &t});
            if (w >= 1) {
                p.setPen(QPen(palette().color(QPalette::Base), 1));
                p.drawLine(seg.topRight(), seg.bottomRight());
                const QString name = termName(t.kind);
                if (fm.horizontalAdvance(name) + 4 < w) {
                    p.setPen(palette().color(QPalette::WindowText));
                    p.drawText(QRectF(x, area.bottom() + 2, w, fm.height()), Qt::AlignHCenter,
                               name);
                }
            }
            x += w;
        }
    }
    bool event(QEvent* e) override {
        if (e->type() == QEvent::ToolTip) {
            const QPoint at = static_cast<QHelpEvent*>(e)->pos();
            for (const auto& [r, t] : segments_)
                if (r.contains(at)) {
                    QToolTip::showText(static_cast<QHelpEvent*>(e)->globalPos(),
                                       termName(t->kind) + QStringLiteral(": ") +
                                           formatBoth(static_cast<double>(t->bytes)),
                                       this);
                    return true;
                }
            QToolTip::hideText();
            return true;
        }
        return QWidget::event(e);
    }

private:
    PeakBreakdown* owner_;
    std::vector<std::pair<QRectF, const PeakTerm*>> segments_;
};

PeakBreakdown::PeakBreakdown(QWidget* parent) : QWidget(parent) {
    setObjectName(QStringLiteral("peakBreakdown"));
    bar_ = new Bar(this);
    note_ = new QLabel(this);
    note_->setObjectName(QStringLiteral("peakAssumption"));
    note_->setWordWrap(true);
    table_ = new QTableWidget(0, 3, this);
    table_->setObjectName(QStringLiteral("peakTable"));
    table_->verticalHeader()->setVisible(false);
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table_->setWordWrap(true);
    table_->verticalHeader()->setSectionResizeMode(
        QHeaderView::ResizeToContents); // rows follow the formula's wrap
    table_->horizontalHeader()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
    table_->horizontalHeader()->setSectionResizeMode(1, QHeaderView::Stretch);
    table_->horizontalHeader()->setSectionResizeMode(2, QHeaderView::ResizeToContents);
    auto* v = new QVBoxLayout(this);
    v->setContentsMargins(0, 0, 0, 0);
    v->addWidget(bar_);
    v->addWidget(note_);
    v->addWidget(table_, 1);
    rebuild();
}

void PeakBreakdown::setResult(std::shared_ptr<const CalculatorResult> result) {
    result_ = std::move(result);
    rebuild();
}

QString PeakBreakdown::termName(PeakTermKind k) {
    switch (k) {
    case PeakTermKind::ModelStates:
        return tr("Model states (shard)");
    case PeakTermKind::Activations:
        return tr("Activations");
    case PeakTermKind::Gathered:
        return tr("Gathered unit(s)");
    case PeakTermKind::GradsInFlight:
        return tr("Full gradients in flight");
    case PeakTermKind::Buffers:
        return tr("Communication buffers");
    case PeakTermKind::Workspace:
        return tr("Workspace");
    }
    return {};
}

QString PeakBreakdown::formula(const PeakTerm& t) const {
    const CalculatorResult& r = *result_;
    const plan::Policy policy = plan::policyFor(r.input.strategy);
    const QString where =
        r.peak && !r.peak->peakPhase.empty() ? peakPhaseLabel(r.peak->peakPhase) : QString();
    switch (t.kind) {
    case PeakTermKind::ModelStates:
        return tr(
            "what the strategy keeps between steps: the device rows of the model-state derivation");
    case PeakTermKind::Activations:
        return r.input.shape ? tr("tensors saved for backward that are still live at the peak (%1)")
                                   .arg(where)
                             : tr("not predicted: a bare parameter count has no shape");
    case PeakTermKind::Gathered:
        if (!policy.shardParams)
            return tr("none: %1 keeps full parameters as a model state")
                .arg(strategyLabel(r.input.strategy));
        return tr("largest unit %1 params × (1 + prefetch %2) × %3 B/param, at most %4")
            .arg(formatCount(static_cast<double>(largestUnitParams(r))))
            .arg(scenarioFor(r.input, r.input.strategy, r.input.ranks).knobs.prefetchDepth)
            .arg(r.input.precision.paramBytes())
            .arg(formatDecimal(static_cast<double>(r.peak ? r.peak->gatheredBytes : 0)));
    case PeakTermKind::GradsInFlight:
        return tr("full gradients of the units in backward, not yet reduce-scattered");
    case PeakTermKind::Buffers:
        return tr("buckets and staging buffers of the collectives in flight");
    case PeakTermKind::Workspace:
        return r.input.shape ? tr("kernel scratch live at the peak")
                             : tr("not predicted: a bare parameter count has no shape");
    }
    return {};
}

QString PeakBreakdown::assumptionText() const {
    if (!result_ || !result_->peak) return {};
    if (result_->input.shape)
        return tr("Predicted device peak %1 (%2) = model states + activations + gathered unit(s) + "
                  "buffers + workspace, from a dry run of one step.")
            .arg(formatDecimal(static_cast<double>(result_->peak->peakBytes)),
                 peakPhaseLabel(result_->peak->peakPhase));
    return tr("A bare parameter count has no model shape, so this peak assumes: no activations and "
              "no workspace (not predicted), "
              "and the whole model as one unit for the gathered bytes. Choose a preset with a "
              "shape for a dry-run peak.");
}

void PeakBreakdown::rebuild() {
    terms_ = result_ ? peakTerms(*result_) : std::vector<PeakTerm>{};
    table_->setHorizontalHeaderLabels({tr("Term"), tr("Formula"), tr("Bytes")});
    table_->setRowCount(static_cast<int>(terms_.size()) + (terms_.empty() ? 0 : 1));
    std::uint64_t total = 0;
    for (std::size_t i = 0; i < terms_.size(); ++i) {
        const PeakTerm& t = terms_[i];
        total += t.bytes;
        auto* name = new QTableWidgetItem(termName(t.kind));
        name->setData(Qt::DecorationRole, categoryColor(categoryOf(t.kind)));
        table_->setItem(static_cast<int>(i), 0, name);
        table_->setItem(static_cast<int>(i), 1, new QTableWidgetItem(formula(t)));
        auto* bytes = new QTableWidgetItem(formatBoth(static_cast<double>(t.bytes)));
        bytes->setData(Qt::UserRole, QVariant::fromValue<qulonglong>(t.bytes));
        bytes->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
        table_->setItem(static_cast<int>(i), 2, bytes);
    }
    if (!terms_.empty()) {
        const int row = static_cast<int>(terms_.size());
        QFont bold = font();
        bold.setBold(true);
        auto* name = new QTableWidgetItem(tr("Predicted device peak"));
        name->setFont(bold);
        table_->setItem(row, 0, name);
        table_->setItem(row, 1,
                        new QTableWidgetItem(
                            tr("shard + activations + gathered unit(s) + buffers + workspace")));
        auto* bytes = new QTableWidgetItem(formatBoth(static_cast<double>(total)));
        bytes->setData(Qt::UserRole, QVariant::fromValue<qulonglong>(total));
        bytes->setFont(bold);
        bytes->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
        table_->setItem(row, 2, bytes);
    }
    note_->setText(terms_.empty() ? tr("No peak prediction for this scenario.") : assumptionText());
    bar_->update();
}

void PeakBreakdown::changeEvent(QEvent* event) {
    if (event->type() == QEvent::LanguageChange) rebuild();
    QWidget::changeEvent(event);
}

} // namespace shardscope::widgets
