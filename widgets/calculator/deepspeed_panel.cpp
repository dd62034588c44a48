#include "calculator/deepspeed_panel.h"

#include "common/byte_format.h"

#include <QEvent>
#include <QGridLayout>
#include <QHeaderView>
#include <QLabel>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QTableWidget>
#include <algorithm>

namespace shardscope::widgets {

namespace {

QTableWidgetItem* cell(const QString& text, const QString& tip = {}) {
    auto* item = new QTableWidgetItem(text);
    item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
    item->setToolTip(tip.isEmpty() ? text : tip);
    return item;
}

} // namespace

DeepSpeedPanel::DeepSpeedPanel(QWidget* parent) : QGroupBox(parent) {
    setObjectName(QStringLiteral("deepspeedPanel"));
    auto* grid = new QGridLayout(this);
    gpusLabel_ = new QLabel(this);
    nodesLabel_ = new QLabel(this);
    gpusSpin_ = new QSpinBox(this);
    gpusSpin_->setObjectName(QStringLiteral("gpusPerNodeSpin"));
    gpusSpin_->setRange(1, 64);
    gpusSpin_->setValue(8);
    nodesSpin_ = new QSpinBox(this);
    nodesSpin_->setObjectName(QStringLiteral("nodesSpin"));
    nodesSpin_->setRange(1, 4096);
    nodesSpin_->setValue(8);
    headline_ = new QLabel(this);
    headline_->setWordWrap(true);
    table_ = new QTableWidget(this);
    table_->setObjectName(QStringLiteral("deepspeedTable"));
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table_->verticalHeader()->setVisible(false);
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    table_->horizontalHeader()->setStretchLastSection(true);
    table_->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    // Six columns must fit the input column: numbers in GB with the unit in the header.
    QFont small = table_->font();
    small.setPointSizeF(small.pointSizeF() * 0.9);
    table_->setFont(small);
    table_->horizontalHeader()->setFont(small);
    why_ = new QLabel(this);
    why_->setObjectName(QStringLiteral("deepspeedWhy"));
    why_->setWordWrap(true);
    grid->addWidget(gpusLabel_, 0, 0);
    grid->addWidget(gpusSpin_, 0, 1);
    grid->addWidget(nodesLabel_, 0, 2);
    grid->addWidget(nodesSpin_, 0, 3);
    grid->addWidget(headline_, 1, 0, 1, 4);
    grid->addWidget(table_, 2, 0, 1, 4);
    grid->addWidget(why_, 3, 0, 1, 4);
    grid->setRowStretch(2, 1);
    connect(gpusSpin_, &QSpinBox::valueChanged, this, &DeepSpeedPanel::layoutChanged);
    connect(nodesSpin_, &QSpinBox::valueChanged, this, &DeepSpeedPanel::layoutChanged);
    retranslateUi();
}

int DeepSpeedPanel::gpusPerNode() const {
    return gpusSpin_->value();
}
int DeepSpeedPanel::nodes() const {
    return nodesSpin_->value();
}

void DeepSpeedPanel::followRanks(int ranks) {
    if (ranks < 1) return;
    int perNode = std::min(ranks, 8);
    while (ranks % perNode != 0)
        --perNode; // the largest node size that divides N
    const QSignalBlocker g(gpusSpin_), n(nodesSpin_);
    gpusSpin_->setValue(perNode);
    nodesSpin_->setValue(ranks / perNode);
}

void DeepSpeedPanel::setResult(std::shared_ptr<const CalculatorResult> result) {
    result_ = std::move(result);
    retranslateUi();
}

void DeepSpeedPanel::changeEvent(QEvent* event) {
    if (event->type() == QEvent::LanguageChange) retranslateUi();
    QGroupBox::changeEvent(event);
}

void DeepSpeedPanel::retranslateUi() {
    setTitle(tr("DeepSpeed's estimator vs. ShardScope"));
    gpusLabel_->setText(tr("GPUs per node"));
    nodesLabel_->setText(tr("Nodes"));
    table_->setColumnCount(6);
    table_->setHorizontalHeaderLabels({tr("Offload"), tr("Init"), tr("DS\nGPU"), tr("ours\nGPU"),
                                       tr("DS\nCPU/node"), tr("ours\nCPU/node")});
    table_->horizontalHeaderItem(1)->setToolTip(
        tr("zero.Init: parameters are created already partitioned"));
    fillTable();
    why_->setText(whyTheyDiffer());
}

void DeepSpeedPanel::fillTable() {
    table_->setRowCount(0);
    if (!result_ || !result_->error.isEmpty()) {
        headline_->clear();
        return;
    }
    const DeepSpeedComparison& d = result_->deepspeed;
    headline_->setText(
        (d.zero3 ? tr("estimate_zero3_model_states_mem_needs_all_live")
                 : tr("estimate_zero2_model_states_mem_needs_all_live")) +
        QLatin1Char('\n') +
        tr("Ψ = %1 on %2 GPUs; largest layer: %3. DS = DeepSpeed, ours = ShardScope (fp16 mixed "
           "Adam, "
           "%2 ranks). All figures in GB (10⁹ B).")
            .arg(formatCount(static_cast<double>(result_->states.paramCount)))
            .arg(d.totalGpus)
            .arg(d.largestLayerParams
                     ? tr("%1 params").arg(formatCount(static_cast<double>(d.largestLayerParams)))
                     : tr("0 (a bare count has no layers)")));
    if (!d.error.isEmpty()) {
        headline_->setText(headline_->text() + QLatin1Char('\n') + d.error);
        return;
    }
    table_->setRowCount(static_cast<int>(d.rows.size()));
    for (int r = 0; r < table_->rowCount(); ++r) {
        const auto& row = d.rows[static_cast<std::size_t>(r)];
        const auto& mine = d.shardscope[static_cast<std::size_t>(r)];
        const QString offload = row.offloadParam
                                    ? tr("param + optim.")
                                    : (row.offloadOptimizer ? tr("optim.") : tr("none"));
        auto* first = new QTableWidgetItem(offload);
        table_->setItem(r, 0, first);
        table_->setItem(r, 1,
                        new QTableWidgetItem(
                            d.zero3 ? (row.zeroInit ? QStringLiteral("✓") : QStringLiteral("–"))
                                    : QStringLiteral("n/a")));
        const auto put = [&](int col, std::uint64_t bytes) {
            const double b = static_cast<double>(bytes);
            table_->setItem(r, col,
                            cell(QString::number(b / 1e9, 'f', b >= 1e11 ? 0 : (b >= 1e9 ? 2 : 3)),
                                 formatBoth(b)));
        };
        put(2, row.gpuBytes);
        put(3, mine.first);
        put(4, row.cpuBytes);
        put(5, mine.second);
    }
}

QString DeepSpeedPanel::whyTheyDiffer() const {
    if (!result_ || !result_->error.isEmpty()) return {};
    if (result_->deepspeed.zero3)
        return tr("Why they differ: DeepSpeed budgets 18 B/param for ZeRO-3: 2 B of 16-bit "
                  "parameters and 16 B in fp32 — master weights, Adam m and v, and an fp32 copy of "
                  "the gradient shard that its optimizer step makes (freed after each update; a "
                  "CPU buffer kept all along when the optimizer is offloaded). It leaves out the "
                  "2 B 16-bit gradient shard it also keeps, adds 4 B × the largest layer on every "
                  "GPU for the gathered layer, and multiplies every CPU figure by "
                  "additional_buffer_factor = 1.5. ShardScope's AdamW reads the bf16 gradient "
                  "shard and keeps no fp32 gradient: it counts the bytes kept between steps "
                  "(2 + 2 + 12, padded shards) and reports gathered units and buckets in the peak, "
                  "not in model states.");
    return tr("Why they differ: DeepSpeed's ZeRO-2 estimate keeps the 16-bit parameters whole on "
              "every GPU (2 B/param) plus 18 B/param of partitioned state — 16-bit gradients 2, an "
              "fp32 gradient copy 4 (made during the optimizer step; kept on the CPU under "
              "offload), fp32 parameters 4 and Adam m, v 8 — and multiplies every CPU figure by "
              "additional_buffer_factor = 1.5 (with ≥ 16 B/param on the host under offload). "
              "ShardScope keeps no fp32 gradient and counts only what this implementation keeps "
              "between steps, shard by shard.");
}

} // namespace shardscope::widgets
