// The run settings' words: field labels, entries and tooltips in the language shown (each
// retranslated on a language change), apart from the field logic in run_config_panel.cpp.
#include "common/theory_names.h"
#include "run/run_config_panel.h"
#include "run/run_request.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QEvent>
#include <QLabel>
#include <QLineEdit>
#include <QSpinBox>
#include <QToolButton>

namespace shardscope::widgets {

using plan::Strategy;

void RunConfigPanel::changeEvent(QEvent* event) {
    if (event->type() == QEvent::LanguageChange) retranslateUi();
    QWidget::changeEvent(event);
}

void RunConfigPanel::retranslateUi() {
    const std::pair<RunField, QString> labels[] = {
        {RunField::Model, tr("Model preset")},
        {RunField::Ranks, tr("Ranks")},
        {RunField::Backend, tr("Backend")},
        {RunField::Strategy, tr("Strategy")},
        {RunField::Steps, tr("Steps")},
        {RunField::MicroBatch, tr("Micro-batch")},
        {RunField::Capacity, tr("Capacity budget")},
        {RunField::BucketBytes, tr("Bucket size")},
        {RunField::Prefetch, tr("Prefetch (units)")},
        {RunField::MaxInflight, tr("In-flight all-gathers")},
        {RunField::Persistence, tr("Persistence threshold")},
        {RunField::HybridGroup, tr("Hybrid group (ranks)")},
        {RunField::OffloadOptimizer, tr("Optimizer states")},
        {RunField::OffloadParams, tr("Parameter shards")},

        {RunField::TensorParallel, tr("Tensor parallel (T)")},
        {RunField::PipeParallel, tr("Pipeline stages (P)")},
        {RunField::PipeSchedule, tr("Pipeline schedule")},
        {RunField::VirtualStages, tr("Chunks per rank (V)")},
        {RunField::GradAccum, tr("Micro-batches per step")},
        {RunField::Save, tr("Save checkpoints to")},
        {RunField::SaveEvery, tr("Save every K steps")},
        {RunField::Resume, tr("Resume from")},
        {RunField::NvmeDir, tr("NVMe folder")},
        {RunField::AioBlockBytes, tr("I/O block size")},
        {RunField::AioQueueDepth, tr("I/O queue depth")}};
    for (const auto& [field, text] : labels)
        rows_[field].label->setText(text);
    backend_->setItemText(0, tr("CPU"));
    backend_->setItemText(1, tr("GPU (CUDA)"));
    backend_->setItemData(0, tr("Every rank computes on the CPU."), Qt::ToolTipRole);
    backend_->setItemData(1, gpuDescription(gpu_), Qt::ToolTipRole);
    threads_->setText(tr("Ranks as threads in one process (no MPI)"));
    threads_->setToolTip(tr(
        "Run every rank as a thread of one shardscope-worker process (--shared-device --ranks N) "
        "instead of one process per rank under mpirun. On the CPU the ranks exchange data through "
        "shared memory; with the GPU backend they all share GPU 0. Needed for more ranks than "
        "GPUs."));
    for (int i = 0; i < strategy_->count(); ++i)
        strategy_->setItemText(
            i, strategyLabel(static_cast<Strategy>(strategy_->itemData(i).toInt())));
    for (int i = 0; i < precision_->count(); ++i)
        precision_->setItemText(
            i, precisionLabel(static_cast<plan::PrecisionKind>(precision_->itemData(i).toInt())));
    precisionLabel_->setText(tr("Precision"));
    checkpointing_->setText(tr("Activation checkpointing"));
    checkpointing_->setToolTip(
        tr("Keep only each block's input and recompute its activations in backward."));
    reshard_->setText(tr("Reshard after forward"));
    reshard_->setToolTip(
        tr("FSDP: free the gathered parameters after forward and gather them again for backward."));
    capacity_->setPlaceholderText(tr("none (e.g. 64MiB)"));
    capacity_->setToolTip(tr("Device memory budget per rank; an allocation beyond it fails the run "
                             "and names what failed."));
    bucket_->setToolTip(tr("All-reduce / reduce-scatter bucket size (DDP, ZeRO-1/2) and all-gather "
                           "bucket (ZeRO-1/2)."));
    prefetch_->setToolTip(tr("Units all-gathered ahead of the one computing (ZeRO-3, FSDP)."));
    inflight_->setToolTip(tr("FSDP's limit on all-gathers in flight at once."));
    persistence_->setToolTip(
        tr("ZeRO-3: units with at most this many parameters stay whole on every rank."));
    hybrid_->setToolTip(tr("FSDP hybrid shard: ranks per shard group; must divide the ranks."));
    microBatch_->setSpecialValueText(tr("preset's"));
    for (QComboBox* c : {offloadOptimizer_, offloadParams_}) {
        c->setItemText(0, tr("on the device"));
        c->setItemText(1, tr("offloaded to host memory"));
        c->setItemText(2, tr("offloaded to NVMe files"));
    }
    nvmeDir_->setPlaceholderText(tr("a folder on a fast disk"));
    nvmeDir_->setToolTip(
        tr("--nvme-dir: one file per rank holds its offloaded states; removed when the run ends."));
    nvmeBrowse_->setText(tr("Browse…"));
    nvmeAdvanced_->setText(tr("Advanced NVMe I/O"));
    aioBlock_->setToolTip(tr("--aio-block-bytes: bytes per read or write (a multiple of 4 KiB; "
                             "DeepSpeed's aio block_size)."));
    aioQueueDepth_->setToolTip(
        tr("--aio-queue-depth: reads and writes in flight at once (DeepSpeed's aio queue_depth)."));
    tensorParallel_->setToolTip(tr(
        "Tensor parallelism: the ranks form a T × D mesh. Each group of T consecutive ranks splits "
        "every block's computation (heads and MLP features; all-reduces of activations), and the "
        "strategy shards each slice's states over the D data-parallel ranks. T must divide the "
        "ranks and the model's heads (the *_tp presets have 4)."));
    pipeParallel_->setToolTip(tr(
        "Pipeline parallelism: the ranks form a P × T × D mesh. The model's layers are split into "
        "P stages of consecutive layers; each stage's ranks hold only its layers, and "
        "activations (forward) and their gradients (backward) travel between neighbouring "
        "stages as messages. P must leave every stage a layer, and P × T must divide the ranks."));
    pipeSchedule_->setToolTip(
        tr("The order of each stage's forward and backward passes: GPipe runs every "
           "micro-batch's forward before any backward (the most activations in flight); 1F1B "
           "alternates them once the pipeline is full (at most P − s micro-batches on stage s); "
           "Interleaved 1F1B gives each rank V chunks of layers, which shrinks the bubble V "
           "times; Zero Bubble H1 splits each backward into the input gradients (B) and the "
           "weight gradients (W) and runs the Ws where the pipeline would idle."));
    virtualStages_->setToolTip(
        tr("Interleaved 1F1B: the layers are cut into P × V chunks and rank s holds chunks s, "
           "s + P, … (--virtual-stages). A micro-batch passes every rank V times: the bubble "
           "falls to (P − 1)/(V·M + P − 1), for V times the messages. The micro-batches per "
           "step must be a multiple of P."));
    gradAccum_->setToolTip(
        tr("Micro-steps per optimizer step (gradient accumulation, --grad-accum). With pipeline "
           "stages these are the micro-batches the schedule sends through them (--micro-batches): "
           "more of them shrink the bubble, (P − 1)/(M + P − 1) of the step."));
    saveDir_->setPlaceholderText(tr("none (a folder)"));
    saveDir_->setToolTip(tr(
        "Save a checkpoint into this folder after the last step (and every K steps): it restores "
        "at any number of ranks and any strategy."));
    saveEvery_->setSpecialValueText(tr("after the last step only"));
    saveEvery_->setToolTip(
        tr("Also save after every K steps; the folder's “latest” names the newest complete one."));
    resume_->setPlaceholderText(tr("none: start from step 1"));
    resume_->setToolTip(tr(
        "A checkpoint folder (its latest step) or one step-K folder in it. The run continues its "
        "step, data and seed; each rank reads only the byte ranges of its new shard."));
    carriedClear_->setText(tr("Use defaults"));
    carriedClear_->setToolTip(tr("Forget these settings: the next run uses their defaults."));
    updateCarriedRow();
    onChanged(); // error texts are translated when they are made
}

} // namespace shardscope::widgets
