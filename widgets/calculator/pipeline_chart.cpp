#include "calculator/pipeline_chart.h"

#include "common/category_palette.h"
#include "common/plot_setup.h"
#include "common/qcustomplot.h"
#include "plan/pipeline.h"
#include "theory/pipeline.h"

#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QResizeEvent>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QVBoxLayout>
#include <algorithm>

namespace shardscope::widgets {

PipelineChart::PipelineChart(QWidget* parent) : QWidget(parent) {
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    auto* controls = new QHBoxLayout;
    stagesLabel_ = new QLabel;
    stages_ = new QSpinBox;
    stages_->setObjectName(QStringLiteral("pipelineStages"));
    stages_->setRange(2, 16);
    stages_->setValue(4);
    virtualLabel_ = new QLabel;
    virtual_ = new QSpinBox;
    virtual_->setObjectName(QStringLiteral("pipelineVirtualStages"));
    virtual_->setRange(2, 4);
    virtual_->setValue(2);
    stagesLabel_->setBuddy(stages_);
    virtualLabel_->setBuddy(virtual_);
    controls->addWidget(stagesLabel_);
    controls->addWidget(stages_);
    controls->addSpacing(12);
    controls->addWidget(virtualLabel_);
    controls->addWidget(virtual_);
    controls->addStretch(1);
    layout->addLayout(controls);
    auto* plotHolder = new QWidget;
    plot_ = makeTitledPlot(plotHolder);
    plot_->setObjectName(QStringLiteral("pipelinePlot"));
    plot_->setMinimumSize(260, 140); // with the controls no taller than the other tabs
    placeLegendBelow(plot_, QSize(20, 10), 0.9);
    layout->addWidget(plotHolder, 1);
    note_ = new QLabel;
    note_->setObjectName(QStringLiteral("pipelineNote"));
    note_->setWordWrap(true);
    note_->setVisible(false); // until a resize finds the room (resizeEvent)
    layout->addWidget(note_);
    connect(stages_, &QSpinBox::valueChanged, this, [this] { rebuild(); });
    connect(virtual_, &QSpinBox::valueChanged, this, [this] { rebuild(); });
    retranslate();
}

void PipelineChart::setStages(int stages) {
    stages_->setValue(stages);
}

void PipelineChart::setVirtualStages(int chunks) {
    virtual_->setValue(chunks);
}

// The note gives its lines to the plot where the tab is short (a 1024×700 window); the plot's
// tooltip keeps it.
void PipelineChart::resizeEvent(QResizeEvent* event) {
    QWidget::resizeEvent(event);
    note_->setVisible(height() >= 330);
}

void PipelineChart::changeEvent(QEvent* event) {
    if (event->type() == QEvent::LanguageChange) retranslate();
    QWidget::changeEvent(event);
}

void PipelineChart::retranslate() {
    stagesLabel_->setText(tr("Pipeline stages P"));
    virtualLabel_->setText(tr("Chunks per rank V (interleaved)"));
    note_->setText(
        tr("Bubble: GPipe and 1F1B (P − 1)/(M + P − 1); interleaved (P − 1)/(V·M + P − 1), M a "
           "multiple of P; ZB-H1 (P − 1)/(3M + P − 1) at equal F, B and W, once M ≥ P. "
           "Activations each stage holds at once: GPipe all M micro-batches; 1F1B at most P − s on "
           "stage s; ZB-H1 up to P, until their weight gradients; interleaved 2(P − s − 1) + "
           "(V − 1)·P + 1 chunks. For a model shape: shardscope-cli estimate --pp."));
    plot_->setToolTip(note_->text());
    rebuild();
}

void PipelineChart::rebuild() {
    const int p = stages_->value(), v = virtual_->value();
    plot_->clearGraphs();
    setPlotTitle(plot_,
                 tr("Pipeline bubble: the share of a step each of P = %1 stages waits").arg(p));
    setAxisTitle(plot_->xAxis, tr("micro-batches per step M"), QStringLiteral("M"));
    setAxisTitle(plot_->yAxis, tr("bubble (% of the step)"), QStringLiteral("%"));
    struct Series {
        plan::PipeSchedule kind;
        QString name;
        int colour;
    };
    const Series series[] = {
        {plan::PipeSchedule::OneFOneB, tr("GPipe and 1F1B"), 0},
        {plan::PipeSchedule::Interleaved, tr("interleaved 1F1B (V = %1)").arg(v), 1},
        {plan::PipeSchedule::ZeroBubbleH1, tr("ZB-H1 (F = B = W)"), 3},
    };
    double highest = 0;
    for (const Series& s : series) {
        QVector<double> keys, values;
        for (int m = 1; m <= kMaxMicroBatches; ++m) {
            const plan::PipeShape shape{p, m, plan::traits(s.kind).virtualStages ? v : 1};
            if (!plan::validatePipe(s.kind, shape, plan::kMaxPipeStages * plan::kMaxVirtualStages)
                     .empty())
                continue;
            keys.push_back(m);
            values.push_back(100.0 * theory::pipeBubble(s.kind, shape, {1, 1, 1}));
            highest = std::max(highest, values.back());
        }
        QCPGraph* g = plot_->addGraph();
        g->setName(s.name);
        g->setProperty("schedule", static_cast<int>(s.kind));
        QPen pen(strategyColor(s.colour), 2);
        g->setPen(pen);
        g->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 5));
        g->setData(keys, values, true);
    }
    plot_->xAxis->setRange(0.5, kMaxMicroBatches + 0.5);
    plot_->yAxis->setRange(0, std::max(10.0, highest * 1.1));
    fitLegendToWidth(plot_);
    plot_->replot();
}

} // namespace shardscope::widgets
