#include "flows/flow_page.h"

#include <QVBoxLayout>

#include "common/palette_legend.h"
#include "flows/flow_view.h"
#include "run/run_document.h"

namespace shardscope::widgets {

FlowPage::FlowPage(RunDocument& document, QWidget* parent) : ReplayPageBase(document, new FlowView, parent) {
    view_ = static_cast<FlowView*>(exportTarget());
    if (auto* v = qobject_cast<QVBoxLayout*>(layout()))
        v->insertWidget(0, new PaletteLegend({ColorFamily::Ranks, ColorFamily::Activities, ColorFamily::Memory}, this));
    view_->setObjectName(QStringLiteral("flowView"));
    connectAll();
}

void FlowPage::resetView() { view_->setModel(&document().model()); }
void FlowPage::growView() { view_->refresh(); }
void FlowPage::moveView(std::uint64_t index) { view_->setPosition(index); }

} // namespace shardscope::widgets
