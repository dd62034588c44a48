#include "flows/flow_page.h"

#include "common/palette_legend.h"
#include "flows/flow_view.h"
#include "run/run_document.h"

#include <QCheckBox>
#include <QEvent>
#include <QHBoxLayout>
#include <QVBoxLayout>

namespace shardscope::widgets {

namespace {

// The views' container (File → Export current view exports both when side by side).
QWidget* makeViews(FlowView*& tp, FlowView*& main) {
    auto* box = new QWidget;
    auto* h = new QHBoxLayout(box);
    h->setContentsMargins(0, 0, 0, 0);
    h->setSpacing(6);
    tp = new FlowView(box);
    main = new FlowView(box);
    h->addWidget(tp, 1);
    h->addWidget(main, 1);
    tp->setVisible(false);
    return box;
}

} // namespace

FlowPage::FlowPage(RunDocument& document, QWidget* parent)
    : ReplayPageBase(document, makeViews(tpView_, view_), parent) {
    exportTarget()->setObjectName(QStringLiteral("flowViews"));
    view_->setObjectName(QStringLiteral("flowView"));
    tpView_->setObjectName(QStringLiteral("flowTensorView"));
    sideBySide_ = new QCheckBox(this);
    sideBySide_->setObjectName(QStringLiteral("flowSideBySide"));
    sideBySide_->setChecked(true);
    sideBySide_->setVisible(false);
    auto* top = new QHBoxLayout;
    top->setContentsMargins(0, 0, 0, 0);
    top->addWidget(
        new PaletteLegend({ColorFamily::Ranks, ColorFamily::Activities, ColorFamily::Memory}, this),
        1);
    top->addWidget(sideBySide_);
    if (auto* v = qobject_cast<QVBoxLayout*>(layout())) v->insertLayout(0, top);
    connect(sideBySide_, &QCheckBox::toggled, this, [this] { applyMode(); });
    retranslateUi();
    connectAll();
}

bool FlowPage::sideBySide() const {
    return sideBySide_->isVisible() && sideBySide_->isChecked();
}

void FlowPage::setSideBySide(bool on) {
    sideBySide_->setChecked(on);
}

// Side by side only where the recording has tensor parallelism (T > 1) and the user wants it.
void FlowPage::applyMode() {
    const auto& info = document().model().info();
    const bool tp = info && info->tensorParallel > 1;
    sideBySide_->setVisible(tp);
    const bool both = tp && sideBySide_->isChecked();
    tpView_->setVisible(both);
    tpView_->setPick(both ? FlowView::Pick::TensorParallel : FlowView::Pick::Playhead);
    view_->setPick(both ? FlowView::Pick::DataParallel : FlowView::Pick::Playhead);
}

void FlowPage::resetView() {
    view_->setModel(&document().model());
    tpView_->setModel(&document().model());
    applyMode();
}

void FlowPage::growView() {
    view_->refresh();
    if (tpView_->isVisibleTo(this)) tpView_->refresh();
}

void FlowPage::moveView(std::uint64_t index) {
    view_->setPosition(index);
    if (tpView_->isVisibleTo(this)) tpView_->setPosition(index);
}

void FlowPage::changeEvent(QEvent* event) {
    if (event->type() == QEvent::LanguageChange) retranslateUi();
    ReplayPageBase::changeEvent(event);
}

void FlowPage::retranslateUi() {
    sideBySide_->setText(tr("TP beside ZeRO"));
    sideBySide_->setToolTip(tr(
        "Show the tensor-parallel all-reduce nearest the playhead (partial sums → the full "
        "activation, "
        "over a TP group) next to ZeRO's all-gather (shards → full parameters, over a DP group)"));
}

} // namespace shardscope::widgets
