// The Flows view's words: titles, captions, the cycle's chain and each rank's state, in the UI's
// language (flow_view.cpp draws them).
#include "common/byte_format.h"
#include "common/run_labels.h"
#include "core/step_number.h"
#include "flows/flow_view.h"

#include <algorithm>

namespace shardscope::widgets {

QString FlowView::cycleLabel(replay::UnitCycle c, Phase phase) {
    switch (c) {
    case replay::UnitCycle::ShardOnly:
        return tr("shard only");
    case replay::UnitCycle::Gathering:
        return tr("unsharding (all-gather)");
    case replay::UnitCycle::Gathered:
        return tr("full parameters");
    case replay::UnitCycle::Computing:
        return tr("computing %1").arg(phaseLabel(phase));
    case replay::UnitCycle::Freed:
        return tr("resharded (full freed)");
    case replay::UnitCycle::ReduceScattering:
        return tr("reduce-scattering");
    case replay::UnitCycle::Reduced:
        return tr("gradient shard summed");
    case replay::UnitCycle::AllReducing:
        return tr("all-reducing");
    case replay::UnitCycle::AllReduced:
        return tr("gradient summed");
    case replay::UnitCycle::GradientsReady:
        return tr("gradients computed");
    case replay::UnitCycle::SliceUpdated:
        return tr("own slice updated");
    case replay::UnitCycle::GatheringUpdates:
        return tr("all-gathering updates");
    case replay::UnitCycle::ParamsUpdated:
        return tr("all parameters updated");
    case replay::UnitCycle::NormPart:
        return tr("own part of the norm");
    case replay::UnitCycle::NormSummed:
        return tr("global norm known");
    case replay::UnitCycle::PartialSum:
        return phase == Phase::Backward ? tr("partial input gradient") : tr("partial activation");
    case replay::UnitCycle::TpReducing:
        return tr("all-reducing (TP group)");
    case replay::UnitCycle::FullSum:
        return phase == Phase::Backward ? tr("full input gradient") : tr("full activation");
    }
    return {};
}

int FlowView::otherStage(int rank) const {
    const auto info = model_ ? model_->info() : nullptr;
    if (!info || info->pipeParallel <= 1 || state_.members.empty()) return -1;
    // A stage with a rank in the collective is this collective's (a message joins two stages).
    const int stage = info->stageOf(rank);
    for (const auto& g : state_.members)
        for (const int m : g)
            if (info->stageOf(m) == stage) return -1;
    return stage;
}

QString FlowView::rankLabel(int rank) const {
    if (rank < 0 || static_cast<std::size_t>(rank) >= state_.ranks.size()) return {};
    if (const int stage = otherStage(rank); stage >= 0)
        return tr("stage %1: other units").arg(stage);
    const replay::FlowRank& fr = state_.ranks[static_cast<std::size_t>(rank)];
    // A TP all-reduce's states are its own phase's (a rank may already compute the next phase).
    return cycleLabel(fr.cycle, state_.scope == replay::CollectiveScope::TensorParallel
                                    ? state_.phase
                                    : fr.phase);
}

QString FlowView::unitName(std::int32_t unit) const {
    return model_ && model_->info() ? QString::fromStdString(model_->info()->unitName(unit))
                                    : tr("unit %1").arg(unit);
}

QString FlowView::subject() const {
    const replay::FlowState& s = state_;
    switch (s.scope) {
    case replay::CollectiveScope::Unit:
        return unitName(s.unit);
    case replay::CollectiveScope::GradNorm:
        return tr("the gradient norm");
    case replay::CollectiveScope::TensorParallel:
        return s.phase == Phase::Backward ? tr("%1's input gradient").arg(unitName(s.unit))
                                          : tr("%1's output activation").arg(unitName(s.unit));
    case replay::CollectiveScope::Bucket:
        return s.kind == CollectiveOp::AllGather
                   ? tr("updated parameters of several units (one bucket)")
                   : tr("gradients of several units (one bucket)");
    }
    return {};
}

QString FlowView::title() const {
    const replay::FlowState& s = state_;
    QString text = collectiveLabel(s.kind) + QStringLiteral(" · ") + subject();
    if (s.scope == replay::CollectiveScope::Bucket)
        text += QStringLiteral(" · ") + (s.kind == CollectiveOp::AllGather
                                             ? tr("after the optimizer step")
                                             : tr("of the backward pass"));
    else if (s.scope == replay::CollectiveScope::TensorParallel)
        text +=
            QStringLiteral(" · ") + phaseLabel(s.phase == Phase::None ? Phase::Forward : s.phase);
    else if (s.phase == Phase::Forward || s.phase == Phase::Backward)
        text += QStringLiteral(" · ") + tr("for its %1").arg(phaseLabel(s.phase));
    text += QStringLiteral(" · ") + tr("step %1").arg(displayStep(s.step, stepsBefore()));
    if (!s.atPlayhead)
        text += QStringLiteral(" · ") + tr("nearest (done)");
    else if (!s.active)
        text += QStringLiteral(" · ") + tr("done");
    if (s.overlapUnit >= 0 && s.kind == CollectiveOp::AllGather &&
        s.scope == replay::CollectiveScope::Unit)
        text +=
            QStringLiteral(" · ") + tr("prefetched while %1 computes").arg(unitName(s.overlapUnit));
    return text;
}

std::int64_t FlowView::stepsBefore() const {
    return model_ && model_->info() ? model_->info()->stepsBefore : 0;
}

QString FlowView::emptyText() const {
    if (!model_ || model_->eventCount() == 0)
        return tr("No run yet: start a run or open a recording, then play it.");
    if (pick_ == Pick::TensorParallel)
        return tr("This recording has no tensor-parallel all-reduce (run with T > 1).");
    if (pick_ == Pick::DataParallel)
        return tr("This recording has no data-parallel collective (D = 1: nothing to shard over).");
    if (state_.earlierStep)
        return tr("No collective in step %1 so far: the last one, the %2 of step %3, has finished; "
                  "the flows appear with this step's first collective.")
            .arg(displayStep(state_.playheadStep, stepsBefore()))
            .arg(collectiveLabel(state_.kind))
            .arg(displayStep(state_.step, stepsBefore()));
    return tr("No collective yet at this point of the replay: the flows appear with the first "
              "all-gather, reduce-scatter or all-reduce.");
}

QString FlowView::subtitle() const {
    const replay::FlowState& s = state_;
    const QString full = formatDecimal(static_cast<double>(s.bytes));
    const QString chunk = formatDecimal(static_cast<double>(s.chunkBytes));
    const QString sent = formatDecimal(static_cast<double>(s.sentPerRank));
    const int n = std::max(s.groupSize, 1);
    const bool mesh = s.members.size() > 1;
    if (s.scope == replay::CollectiveScope::GradNorm)
        return tr("Every rank contributes its part of the squared gradient norm (%1) and ends with "
                  "the same global norm, so every rank clips its gradients alike.")
            .arg(full);
    if (s.scope == replay::CollectiveScope::Bucket && s.kind == CollectiveOp::AllGather)
        return tr("Each rank updated only its own slice (%1); %2 slices become %3 of updated "
                  "parameters on every rank; each rank sends %4.")
            .arg(chunk)
            .arg(n)
            .arg(full, sent);
    switch (s.kind) {
    case CollectiveOp::AllGather:
        if (mesh)
            return tr("In each data-parallel group, %1 shards of %2 become %3 of full parameters "
                      "(one TP slice of the unit); each rank sends %4. Each rank then computes the "
                      "whole slice on its own samples: the storage is split.")
                .arg(n)
                .arg(chunk, full, sent);
        return tr("%1 shards of %2 become %3 of full parameters on every rank; each rank sends %4.")
            .arg(n)
            .arg(chunk, full, sent);
    case CollectiveOp::ReduceScatter:
        return tr("Every rank's %1 gradient is cut into %2 chunks of %3; chunk j is summed over "
                  "all ranks into rank j's shard; each rank sends %4.")
            .arg(full)
            .arg(n)
            .arg(chunk, sent);
    case CollectiveOp::AllReduce:
        return tr("Every rank contributes %1 and ends with the same sum; each rank sends %2 "
                  "(2(N−1)/N of it).")
            .arg(full, sent);
    case CollectiveOp::Broadcast:
        return tr("One rank sends %1 to every other rank.").arg(full);
    case CollectiveOp::TpAllReduce:
        if (s.phase == Phase::Backward)
            return tr("Each of the %1 TP ranks computed the input gradient from its own heads / "
                      "MLP columns: %2 of partial sums, added into the full input gradient on "
                      "each; each rank sends %3 (2(T−1)/T). The computation is split, nothing is "
                      "sharded.")
                .arg(n)
                .arg(full, sent);
        return tr("Each of the %1 TP ranks computed the output from its own heads / MLP columns: "
                  "%2 of partial sums, added into the full activation on each; each rank sends %3 "
                  "(2(T−1)/T). The computation is split, nothing is sharded.")
            .arg(n)
            .arg(full, sent);
    case CollectiveOp::PipeSend:
        if (s.phase == Phase::Backward)
            return tr("A pipeline stage hands the gradient of its input, %1, back to the previous "
                      "stage: one message between two ranks, nothing summed or sharded.")
                .arg(full);
        return tr("A pipeline stage hands its output activations, %1, to the next stage: one "
                  "message between two ranks, nothing summed or sharded.")
            .arg(full);
    case CollectiveOp::PipeRecv:
        return tr("A pipeline stage waits for %1 from its neighbour: the time until it arrives "
                  "is the stage's share of the bubble.")
            .arg(full);
    case CollectiveOp::None:
        break;
    }
    return {};
}

QString FlowView::rowCaption(bool top) const {
    const replay::FlowState& s = state_;
    const bool bucket = s.scope == replay::CollectiveScope::Bucket;
    switch (s.kind) {
    case CollectiveOp::AllGather:
        if (bucket)
            return top ? tr("each rank's updated slice") : tr("updated parameters on every rank");
        return top ? tr("each rank's shard") : tr("full parameters");
    case CollectiveOp::ReduceScatter:
        return top ? tr("full gradients") : tr("summed gradient shard");
    case CollectiveOp::PipeSend:
    case CollectiveOp::PipeRecv: // a point-to-point message: moved, not summed
        return top ? tr("the sending stage's activation or gradient")
                   : tr("after: the same bytes on the receiving stage (nothing summed)");
    case CollectiveOp::TpAllReduce:
        if (s.phase == Phase::Backward)
            return top ? tr("each rank's partial input gradient (its heads / columns)")
                       : tr("after: the full input gradient on every rank of the TP group");
        return top ? tr("each rank's partial activation (its heads / columns)")
                   : tr("after: the full activation on every rank of the TP group");
    default:
        if (s.scope == replay::CollectiveScope::GradNorm)
            return top ? tr("each rank's part of the norm")
                       : tr("after: the global norm on every rank");
        return top ? tr("each rank's buffer") : tr("after: the sum on every rank");
    }
}

QString FlowView::groupCaption(std::size_t g) const {
    const replay::FlowState& s = state_;
    QStringList ranks;
    for (int r : s.members[g])
        ranks << QString::number(r);
    const QString list = ranks.join(QStringLiteral(", "));
    if (s.kind == CollectiveOp::TpAllReduce) return tr("TP group %1: ranks %2").arg(g).arg(list);
    const int t = model_ && model_->info() ? model_->info()->tensorParallel : 1;
    if (s.groupSize * t == s.worldSize) return tr("DP group %1: ranks %2").arg(g).arg(list);
    return tr("group %1: ranks %2").arg(g).arg(list);
}

// The cycle as a chain, so a still picture says where these states sit in the story.
FlowView::Chain FlowView::chain() const {
    const replay::FlowState& s = state_;
    const bool gradients =
        s.kind == CollectiveOp::ReduceScatter || s.kind == CollectiveOp::AllReduce;
    std::vector<replay::UnitCycle> cycles;
    QString lead = gradients ? tr("Gradient cycle:") : tr("Unit cycle:");
    if (s.scope == replay::CollectiveScope::GradNorm) {
        cycles = {replay::UnitCycle::NormPart, replay::UnitCycle::AllReducing,
                  replay::UnitCycle::NormSummed};
        lead = tr("Gradient norm:");
    } else if (s.scope == replay::CollectiveScope::TensorParallel) {
        cycles = {replay::UnitCycle::PartialSum, replay::UnitCycle::TpReducing,
                  replay::UnitCycle::FullSum};
        lead = tr("Tensor parallelism:");
    } else if (s.scope == replay::CollectiveScope::Bucket) {
        if (s.kind == CollectiveOp::AllGather) {
            cycles = {replay::UnitCycle::SliceUpdated, replay::UnitCycle::GatheringUpdates,
                      replay::UnitCycle::ParamsUpdated};
            lead = tr("Parameter update:");
        } else if (s.kind == CollectiveOp::ReduceScatter) {
            cycles = {replay::UnitCycle::GradientsReady, replay::UnitCycle::ReduceScattering,
                      replay::UnitCycle::Reduced};
        } else {
            cycles = {replay::UnitCycle::GradientsReady, replay::UnitCycle::AllReducing,
                      replay::UnitCycle::AllReduced};
        }
    } else if (s.kind == CollectiveOp::AllReduce)
        cycles = {replay::UnitCycle::Computing, replay::UnitCycle::AllReducing,
                  replay::UnitCycle::AllReduced};
    else if (gradients)
        cycles = {replay::UnitCycle::Computing, replay::UnitCycle::Freed,
                  replay::UnitCycle::ReduceScattering, replay::UnitCycle::Reduced};
    else
        cycles = {replay::UnitCycle::ShardOnly, replay::UnitCycle::Gathering,
                  replay::UnitCycle::Gathered, replay::UnitCycle::Computing,
                  replay::UnitCycle::Freed};
    Chain out{lead, {}};
    for (replay::UnitCycle c : cycles) {
        const int count = static_cast<int>(
            std::count_if(s.ranks.begin(), s.ranks.end(),
                          [c](const replay::FlowRank& f) { return f.cycle == c; }));
        out.items.push_back(
            {c,
             cycleLabel(c, gradients && s.scope != replay::CollectiveScope::TensorParallel
                               ? Phase::Backward
                               : s.phase) +
                 (count > 0 ? tr(" (ranks: %1)").arg(count) : QString()),
             count > 0});
    }
    return out;
}

} // namespace shardscope::widgets
