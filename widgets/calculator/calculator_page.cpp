#include "calculator/calculator_page.h"

#include "calculator/calculator_inputs.h"
#include "calculator/category_bar_chart.h"
#include "calculator/deepspeed_panel.h"
#include "calculator/derivation_model.h"
#include "calculator/mesh_chart.h"
#include "calculator/peak_breakdown.h"
#include "calculator/pipeline_chart.h"
#include "calculator/scaling_chart.h"
#include "common/byte_format.h"
#include "common/palette_legend.h"
#include "common/side_column.h"
#include "common/theory_names.h"

#include <QElapsedTimer>
#include <QEvent>
#include <QHeaderView>
#include <QLabel>
#include <QScrollArea>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>

namespace shardscope::widgets {

CalculatorPage::CalculatorPage(QWidget* parent) : QWidget(parent) {
    setObjectName(QStringLiteral("calculatorPage"));
    auto* split = new QSplitter(Qt::Horizontal, this);
    split->addWidget(buildInputColumn());
    split->addWidget(buildOutputs());
    split->setStretchFactor(1, 1);
    split->setSizes({385, 915});
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(new PaletteLegend({ColorFamily::Memory, ColorFamily::Ranks}, this));
    layout->addWidget(split);

    recomputeTimer_.setSingleShot(true);
    recomputeTimer_.setInterval(kCoalesceMs);
    connect(&recomputeTimer_, &QTimer::timeout, this, &CalculatorPage::recompute);
    connect(inputs_, &CalculatorInputs::inputChanged, &recomputeTimer_,
            qOverload<>(&QTimer::start));
    connect(deepspeed_, &DeepSpeedPanel::layoutChanged, &recomputeTimer_,
            qOverload<>(&QTimer::start));
    retranslateUi();
    recompute();
}

// Left: what the user chooses, the inline error, and DeepSpeed's estimate for the same model.
QWidget* CalculatorPage::buildInputColumn() {
    auto* left = new QWidget;
    auto* leftLayout = new QVBoxLayout(left);
    leftLayout->setContentsMargins(4, 4, 4, 4);
    inputsTitle_ = new QLabel(left);
    inputsTitle_->setStyleSheet(QStringLiteral("font-weight: bold;"));
    inputs_ = new CalculatorInputs(left);
    errorLabel_ = new QLabel(left);
    errorLabel_->setObjectName(QStringLiteral("calculatorError"));
    errorLabel_->setWordWrap(true);
    errorLabel_->setStyleSheet(QStringLiteral("color: #c0392b; font-weight: bold;"));
    errorLabel_->setVisible(false);
    deepspeed_ = new DeepSpeedPanel(left);
    leftLayout->addWidget(inputsTitle_);
    leftLayout->addWidget(inputs_);
    leftLayout->addWidget(errorLabel_);
    leftLayout->addWidget(deepspeed_, 1);
    QScrollArea* column = sideColumn(left);
    putAwayWhilePresenting(column); // the charts fill a projector; F5 brings the inputs back
    return column;
}

// Right: the two charts on top, the numbers (summary, derivation) below.
QWidget* CalculatorPage::buildOutputs() {
    scaling_ = new ScalingChart;
    scaling_->setObjectName(QStringLiteral("scalingChart"));
    bars_ = new CategoryBarChart;
    bars_->setObjectName(QStringLiteral("categoryBarChart"));
    derivation_ = new DerivationModel(this);
    table_ = new QTableView;
    table_->setObjectName(QStringLiteral("derivationTable"));
    table_->setModel(derivation_);
    table_->verticalHeader()->setVisible(false);
    table_->setAlternatingRowColors(true);
    table_->setWordWrap(true); // formulas and sources are long; wrap rather than truncate
    auto* header = table_->horizontalHeader();
    header->setSectionResizeMode(QHeaderView::ResizeToContents);
    header->setSectionResizeMode(DerivationModel::FormulaCol, QHeaderView::Interactive);
    header->setSectionResizeMode(DerivationModel::SourceCol, QHeaderView::Stretch);
    header->resizeSection(DerivationModel::FormulaCol, 260);
    connect(derivation_, &QAbstractItemModel::modelReset, table_,
            &QTableView::resizeRowsToContents);
    summary_ = new QLabel;
    summary_->setObjectName(QStringLiteral("calculatorSummary"));
    summary_->setWordWrap(true);
    summary_->setTextFormat(Qt::RichText);
    summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);

    auto* charts = new QSplitter(Qt::Horizontal);
    charts->addWidget(scaling_);
    charts->addWidget(bars_);
    peak_ = new PeakBreakdown;
    numberTabs_ = new QTabWidget;
    numberTabs_->setObjectName(QStringLiteral("calculatorNumberTabs"));
    // Four tabs in a 1024 px window: each gives up the end of its name (the tooltip keeps it)
    // rather than the last ones hiding behind scroll arrows.
    numberTabs_->setElideMode(Qt::ElideRight);
    numberTabs_->setUsesScrollButtons(false);
    numberTabs_->addTab(peak_, QString());
    numberTabs_->addTab(table_, QString());
    mesh_ = new MeshChart;
    mesh_->setObjectName(QStringLiteral("meshChart"));
    numberTabs_->addTab(mesh_, QString());
    pipeline_ = new PipelineChart;
    pipeline_->setObjectName(QStringLiteral("pipelineChart"));
    numberTabs_->addTab(pipeline_, QString());
    auto* numbers = new QWidget;
    auto* numbersLayout = new QVBoxLayout(numbers);
    numbersLayout->setContentsMargins(0, 0, 0, 0);
    numbersLayout->addWidget(summary_);
    numbersLayout->addWidget(numberTabs_, 1);
    auto* outputs = new QSplitter(Qt::Vertical);
    outputs_ = outputs;
    outputs->addWidget(charts);
    outputs->addWidget(numbers);
    outputs->setStretchFactor(0, 1);
    outputs->setStretchFactor(1, 1);
    // Proportions, not pixels: the charts get the larger share (a 700 px window leaves them
    // ~370 px instead of ~220; the numbers below scroll).
    outputs->setSizes({580, 420});
    return outputs;
}

void CalculatorPage::setPresenting(bool on) {
    presentPane(outputs_, 0, on); // the charts; the numbers below are a drag away
    if (!on) recompute();         // texts made while presenting copied the large fonts: made again
}

QString CalculatorPage::errorText() const {
    return errorLabel_->isVisible() ? errorLabel_->text() : QString();
}

void CalculatorPage::recomputeNow() {
    if (recomputeTimer_.isActive()) {
        recomputeTimer_.stop();
        recompute();
    }
}

void CalculatorPage::recompute() {
    QElapsedTimer clock;
    clock.start();
    CalculatorInput in = inputs_->input();
    // The DeepSpeed panel describes the same N as the scenario until the user splits it otherwise.
    if (in.ranks != followedRanks_) {
        deepspeed_->followRanks(in.ranks);
        followedRanks_ = in.ranks;
    }
    in.gpusPerNode = deepspeed_->gpusPerNode();
    in.nodes = deepspeed_->nodes();
    auto result = computeCalculator(in);
    error_ = result->error;
    errorLabel_->setText(error_.isEmpty() ? QString() : tr("Invalid input: %1").arg(error_));
    errorLabel_->setVisible(!error_.isEmpty());
    // Keep the last valid charts on screen while the user fixes the input.
    if (error_.isEmpty()) showResult(std::move(result));
    Q_EMIT statusMessage(
        error_.isEmpty()
            ? tr("Recomputed in %1 ms").arg(QString::number(clock.nsecsElapsed() / 1e6, 'f', 1))
            : tr("Input is invalid; showing the last valid result"));
}

void CalculatorPage::showResult(std::shared_ptr<const CalculatorResult> result) {
    shown_ = std::move(result);
    scaling_->setResult(shown_);
    bars_->setResult(shown_);
    derivation_->setResult(shown_);
    peak_->setResult(shown_);
    mesh_->setResult(shown_);
    deepspeed_->setResult(shown_);
    summary_->setText(summaryText());
}

void CalculatorPage::changeEvent(QEvent* event) {
    if (event->type() == QEvent::LanguageChange) retranslateUi();
    QWidget::changeEvent(event);
}

void CalculatorPage::retranslateUi() {
    inputsTitle_->setText(tr("Scenario"));
    numberTabs_->setTabText(0, tr("Why the peak exceeds the model states"));
    numberTabs_->setTabText(1, tr("Model-state derivation"));
    numberTabs_->setTabText(2, tr("Memory vs P × T × D"));
    numberTabs_->setTabText(3, tr("Pipeline bubble"));
    for (int i = 0; i < numberTabs_->count(); ++i)
        numberTabs_->setTabToolTip(i, numberTabs_->tabText(i));
    derivation_->retranslate();
    summary_->setText(summaryText());
    if (!error_.isEmpty()) recompute(); // our own messages are translated at compute time
}

QString CalculatorPage::summaryText() const {
    if (!shown_) return {};
    const CalculatorResult& r = *shown_;
    const ByteTable& t = r.states.perRank;
    QString html = tr("<b>%1</b> at N = %2")
                       .arg(strategyLabel(r.input.strategy).toHtmlEscaped())
                       .arg(r.input.ranks);
    if (r.input.tensorParallel > 1 && r.input.shape)
        html += QStringLiteral("<br>") +
                tr("Mesh T × D = %1 × %2: Ψ below is one TP rank's slice of the model's %3")
                    .arg(r.input.tensorParallel)
                    .arg(r.input.ranks / r.input.tensorParallel)
                    .arg(formatCount(static_cast<double>(plan::modelParamCount(*r.input.shape))));
    html += QStringLiteral("<br>") +
            tr("Ψ = %1 parameters (padded: %2)")
                .arg(formatCount(static_cast<double>(r.states.paramCount)),
                     formatCount(static_cast<double>(r.states.paddedParamCount)));
    html += QStringLiteral("<br>") +
            tr("Model states per rank: <b>%1</b> on device, %2 on host, %3 on NVMe")
                .arg(formatBoth(static_cast<double>(t.tier(Tier::Device))),
                     formatDecimal(static_cast<double>(t.tier(Tier::Host))),
                     formatDecimal(static_cast<double>(t.tier(Tier::Nvme))));
    if (r.peak && r.peak->peakBytes > 0) {
        html +=
            QStringLiteral("<br>") +
            tr("Predicted device peak: %1").arg(formatBoth(static_cast<double>(r.peak->peakBytes)));
        if (!r.input.shape)
            html += QStringLiteral(" ") +
                    tr("(a bare parameter count: activations and workspace not predicted)");
    }
    // Ψ-equivalents count the data-parallel collectives alone (estimate.h): beside a total that
    // holds the TP all-reduces too, the figure says which part it is.
    const QString sent = formatDecimal(static_cast<double>(r.comm.totalSentBytes));
    const QString psi = QString::number(r.comm.psiEquivalents, 'f', 2);
    html += QStringLiteral("<br>") +
            (r.input.tensorParallel > 1
                 ? tr("Communication per rank per step: <b>%1</b> sent, tensor- and data-parallel "
                      "together (the data-parallel part alone ≈ %2 Ψ)")
                       .arg(sent, psi)
                 : tr("Communication per rank per step: <b>%1</b> sent (≈ %2 Ψ)").arg(sent, psi));
    if (r.input.tensorParallel > 1 && r.input.shape) {
        const int tp = r.input.tensorParallel, dp = r.input.ranks / tp;
        html += QStringLiteral("<br>&nbsp;&nbsp;· ") +
                tr("tensor-parallel traffic (TP group of %1, critical path): %2 in %3 calls")
                    .arg(tp)
                    .arg(formatDecimal(static_cast<double>(r.traffic.tpSentBytes)))
                    .arg(r.traffic.tpCalls);
        html += QStringLiteral("<br>&nbsp;&nbsp;· ") +
                tr("data-parallel traffic (DP group of %1): %2 in %3 calls")
                    .arg(dp)
                    .arg(formatDecimal(static_cast<double>(r.traffic.dpSentBytes)))
                    .arg(r.traffic.dpCalls);
    }
    for (const auto& v : r.comm.byKind)
        html += QStringLiteral("<br>&nbsp;&nbsp;· ") +
                tr("%1: %2 sent in %3 calls")
                    .arg(QString::fromUtf8(collectiveOpName(v.kind).data(),
                                           static_cast<qsizetype>(collectiveOpName(v.kind).size())))
                    .arg(formatDecimal(static_cast<double>(v.sentBytes)))
                    .arg(v.calls);
    return html;
}

} // namespace shardscope::widgets
