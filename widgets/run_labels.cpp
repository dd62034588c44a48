#include "run_labels.h"

#include <QCoreApplication>

namespace shardscope::widgets {
namespace {
QString tr(const char* s) { return QCoreApplication::translate("RunLabels", s); }
} // namespace

QString phaseLabel(Phase p) {
    switch (p) {
    case Phase::None: return {};
    case Phase::Forward: return tr("forward");
    case Phase::Backward: return tr("backward");
    case Phase::Optimizer: return tr("optimizer");
    case Phase::Recompute: return tr("recompute");
    }
    return {};
}

QString collectiveLabel(CollectiveOp c) {
    switch (c) {
    case CollectiveOp::None: return {};
    case CollectiveOp::AllGather: return tr("all-gather");
    case CollectiveOp::ReduceScatter: return tr("reduce-scatter");
    case CollectiveOp::AllReduce: return tr("all-reduce");
    case CollectiveOp::Broadcast: return tr("broadcast");
    }
    return {};
}

QString strategyStory(theory::Strategy s, int ranks, int hybridGroup) {
    using theory::Strategy;
    switch (s) {
    case Strategy::Ddp:
        return tr("DDP: every rank keeps the whole model — parameters, gradients and optimizer state — and all-reduces gradients.");
    case Strategy::Zero1:
        return tr("ZeRO-1: each rank keeps 1/%1 of the optimizer state (fp32 master, Adam m, v); parameters and gradients stay whole.").arg(ranks);
    case Strategy::Zero2:
        return tr("ZeRO-2: optimizer state and gradients are sharded 1/%1; gradients are reduce-scattered bucket by bucket during backward.").arg(ranks);
    case Strategy::Zero3:
        return tr("ZeRO-3: parameters, gradients and optimizer state are all sharded 1/%1; each unit is all-gathered just before it computes and freed right after.").arg(ranks);
    case Strategy::FsdpFullShard:
        return tr("FSDP full shard: each unit's flat parameter is sharded 1/%1, all-gathered for forward and backward, and resharded after use.").arg(ranks);
    case Strategy::FsdpShardGradOp:
        return tr("FSDP shard grad-op: gradients and optimizer state are sharded 1/%1; parameters stay gathered from forward until backward ends.").arg(ranks);
    case Strategy::FsdpHybridShard:
        return tr("FSDP hybrid shard: units are sharded inside groups of %1 ranks and replicated across the %2 groups.").arg(hybridGroup).arg(hybridGroup > 0 ? ranks / hybridGroup : 0);
    }
    return {};
}

std::optional<theory::Strategy> strategyFromName(const std::string& name) { return theory::parseStrategy(name); }

} // namespace shardscope::widgets
