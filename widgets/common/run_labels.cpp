#include "common/run_labels.h"

#include "core/step_number.h"
#include "plan/collective.h"
#include "theory/link.h"

#include <QCoreApplication>
#include <QStringList>
#include <algorithm>

namespace shardscope::widgets {
QString phaseLabel(Phase p) {
    switch (p) {
    case Phase::None:
        return {};
    case Phase::Forward:
        return QCoreApplication::translate("RunLabels", "forward");
    case Phase::Backward:
        return QCoreApplication::translate("RunLabels", "backward");
    case Phase::Optimizer:
        return QCoreApplication::translate("RunLabels", "optimizer");
    case Phase::Recompute:
        return QCoreApplication::translate("RunLabels", "recompute");
    case Phase::Save:
        return QCoreApplication::translate("RunLabels", "checkpoint save");
    case Phase::WeightGrad:
        return QCoreApplication::translate("RunLabels", "weight gradients");
    }
    return {};
}

QString collectiveLabel(CollectiveOp c) {
    // The traits table's display name, translated in its context (marked there for lupdate).
    const plan::CollectiveTraits& t = plan::traits(c);
    return c == CollectiveOp::None
               ? QString()
               : QCoreApplication::translate(t.trContext.data(), t.displayName.data());
}

QString spanKindLabel(replay::SpanKind k) {
    const replay::SpanKindTraits& t = replay::traitsOf(k);
    if (t.op != CollectiveOp::None) return collectiveLabel(t.op);
    if (t.transfer != Transfer::None) return transferLabel(t.transfer);
    if (t.phase != Phase::None) return phaseLabel(t.phase);
    // A gathered unit's lifetime: the timeline's context keeps the existing translation.
    return QCoreApplication::translate("TimelinePainter", "gathered parameters");
}

QString collectiveShortLabel(CollectiveOp c) {
    switch (c) {
    case CollectiveOp::AllGather:
        return QCoreApplication::translate("RunLabels", "all-gather", "short, on a bar");
    case CollectiveOp::ReduceScatter:
        return QCoreApplication::translate("RunLabels", "reduce-scatter", "short, on a bar");
    case CollectiveOp::AllReduce:
        return QCoreApplication::translate("RunLabels", "all-reduce", "short, on a bar");
    case CollectiveOp::Broadcast:
        return QCoreApplication::translate("RunLabels", "broadcast", "short, on a bar");
    case CollectiveOp::TpAllReduce:
        return QCoreApplication::translate("RunLabels", "TP all-reduce", "short, on a bar");
    case CollectiveOp::PipeSend:
        return QCoreApplication::translate("RunLabels", "send", "short, on a bar");
    case CollectiveOp::PipeRecv:
        return QCoreApplication::translate("RunLabels", "receive", "short, on a bar");
    case CollectiveOp::None:
        break;
    }
    return {};
}

QString spanKindShortLabel(replay::SpanKind k) {
    const replay::SpanKindTraits& t = replay::traitsOf(k);
    return t.op != CollectiveOp::None ? collectiveShortLabel(t.op) : spanKindLabel(k);
}

QString transferLabel(Transfer t) {
    switch (t) {
    case Transfer::DeviceToHost:
        return QCoreApplication::translate("RunLabels", "device → host");
    case Transfer::HostToDevice:
        return QCoreApplication::translate("RunLabels", "host → device");
    case Transfer::NvmeRead:
        return QCoreApplication::translate("RunLabels", "NVMe read");
    case Transfer::NvmeWrite:
        return QCoreApplication::translate("RunLabels", "NVMe write");
    case Transfer::None:
        break;
    }
    return {};
}

QString strategyStory(plan::Strategy s, int ranks, int hybridGroup) {
    using plan::Strategy;
    switch (s) {
    case Strategy::Ddp:
        return QCoreApplication::translate(
            "RunLabels", "DDP: every rank keeps the whole model — parameters, gradients and "
                         "optimizer state — and all-reduces gradients.");
    case Strategy::Zero1:
        return QCoreApplication::translate(
                   "RunLabels", "ZeRO-1: each rank keeps 1/%1 of the optimizer state (fp32 master, "
                                "Adam m, v); parameters and gradients stay whole.")
            .arg(ranks);
    case Strategy::Zero2:
        return QCoreApplication::translate(
                   "RunLabels", "ZeRO-2: optimizer state and gradients are sharded 1/%1; gradients "
                                "are reduce-scattered bucket by bucket during backward.")
            .arg(ranks);
    case Strategy::Zero3:
        return QCoreApplication::translate(
                   "RunLabels",
                   "ZeRO-3: parameters, gradients and optimizer state are all sharded 1/%1; each "
                   "unit is all-gathered just before it computes and freed right after.")
            .arg(ranks);
    case Strategy::FsdpFullShard:
        return QCoreApplication::translate(
                   "RunLabels", "FSDP full shard: each unit's flat parameter is sharded 1/%1, "
                                "all-gathered for forward and backward, and resharded after use.")
            .arg(ranks);
    case Strategy::FsdpShardGradOp:
        return QCoreApplication::translate(
                   "RunLabels", "FSDP shard grad-op: gradients and optimizer state are sharded "
                                "1/%1; parameters stay gathered from forward until backward ends.")
            .arg(ranks);
    case Strategy::FsdpHybridShard:
        return QCoreApplication::translate("RunLabels",
                                           "FSDP hybrid shard: units are sharded inside groups of "
                                           "%1 ranks and replicated across the %2 groups.")
            .arg(hybridGroup)
            .arg(hybridGroup > 0 ? ranks / hybridGroup : 0);
    }
    return {};
}

std::optional<plan::Strategy> strategyFromName(const std::string& name) {
    return plan::parseStrategy(name);
}

QString peakPhaseLabel(const std::string& phase) {
    static const std::pair<const char*, const char*> kOfUnit[] = {
        {"forward of ", QT_TRANSLATE_NOOP("RunLabels", "the forward of %1")},
        {"backward of ", QT_TRANSLATE_NOOP("RunLabels", "the backward of %1")},
        {"gradient reduction of ", QT_TRANSLATE_NOOP("RunLabels", "the gradient reduction of %1")},
    };
    for (const auto& [prefix, text] : kOfUnit)
        if (phase.rfind(prefix, 0) == 0)
            return QCoreApplication::translate("RunLabels", text)
                .arg(QString::fromStdString(phase.substr(std::string_view(prefix).size())));
    static const std::pair<const char*, const char*> kWhole[] = {
        {"gradient reduce-scatter", QT_TRANSLATE_NOOP("RunLabels", "the gradient reduce-scatter")},
        {"parameter all-gather", QT_TRANSLATE_NOOP("RunLabels", "the parameter all-gather")},
        {"start of step", QT_TRANSLATE_NOOP("RunLabels", "the start of the step")},
        {"backward", QT_TRANSLATE_NOOP("RunLabels", "the backward pass")},
    };
    for (const auto& [name, text] : kWhole)
        if (phase == name) return QCoreApplication::translate("RunLabels", text);
    return QString::fromStdString(phase);
}

QString failureWhen(std::int64_t protocolStep, std::int64_t stepsBefore) {
    if (protocolStep < 0) return QCoreApplication::translate("RunLabels", "during setup");
    return QCoreApplication::translate("RunLabels", "in step %1")
        .arg(displayStep(protocolStep, stepsBefore));
}

QString exposedTransferExplanation() {
    return QCoreApplication::translate(
        "RunLabels",
        "Exposed transfers: the share of the step in which offloaded state was crossing tiers "
        "(device ↔ host copies, NVMe reads and writes) while the rank computed nothing — the "
        "union of the transfer intervals minus compute, where the rank's own copies and its "
        "waits for NVMe count as not computing. Lower is better: pipelining per unit hides "
        "NVMe traffic behind the optimizer.");
}

QString exposedTransferText(const report::RunReport& report) {
    QStringList values;
    bool moved = false;
    for (const report::RankReport& rr : report.ranks) {
        moved = moved || rr.exposedTransfer.transferUnionNs > 0;
        values << QCoreApplication::translate("RunLabels", "rank %1 %2")
                      .arg(rr.rank)
                      .arg(percentText(rr.exposedTransfer.fractionMedian));
    }
    if (!moved) return {};
    if (values.size() > 8)
        return QCoreApplication::translate("RunLabels",
                                           "<b>Exposed transfers</b> between tiers: up to %1.")
            .arg(percentText(report.exposedTransferFraction));
    return QCoreApplication::translate("RunLabels", "<b>Exposed transfers</b> between tiers: %1.")
        .arg(values.join(QStringLiteral(" · ")));
}

QString exposedCommExplanation() {
    return QCoreApplication::translate(
        "RunLabels",
        "Exposed communication: the share of the step spent waiting for communication that no "
        "compute hid — the union of the intervals in which a collective was outstanding, minus "
        "compute, over the step time. Lower is better: prefetching and bucketing hide "
        "communication behind compute.");
}

QString percentText(double fraction) {
    return QStringLiteral("%1%").arg(fraction * 100.0, 0, 'f', 1);
}

namespace {

QString millisecondsText(double seconds) {
    const double ms = seconds * 1e3;
    return QCoreApplication::translate("RunLabels", "%1 ms")
        .arg(ms, 0, 'f', ms < 0.1 ? 3 : (ms < 10 ? 2 : 1));
}

} // namespace

QString gpuLinkEstimateText(const report::RunReport& report, int rank, int tensorParallel) {
    const auto it = std::find_if(report.ranks.begin(), report.ranks.end(),
                                 [rank](const report::RankReport& r) { return r.rank == rank; });
    if (it == report.ranks.end()) return {};
    // One node's NVLink domain: an HGX board holds 8 GPUs, a larger job spans nodes.
    if (report.worldSize > 8) return {};
    const int t = std::max(tensorParallel, 1);
    const int dp = std::max(report.worldSize / t, 1);
    // HYBRID_SHARD gathers and reduce-scatters in its shard group, all-reduces across replicas.
    int shardGroup = dp;
    if (report.strategy == "fsdp_hybrid") {
        const auto knobs = report.config.find("knobs");
        if (knobs != report.config.end() && knobs->is_object())
            if (const auto g = knobs->find("hybrid_group");
                g != knobs->end() && g->is_number_integer() && g->get<int>() >= 1 &&
                dp % g->get<int>() == 0)
                shardGroup = g->get<int>();
    }
    theory::LinkEstimate estimate;
    for (const auto& [kind, sent] : it->commBytesPerStep) {
        const auto op =
            std::find_if(plan::kCollectives.begin(), plan::kCollectives.end(),
                         [&kind](CollectiveOp c) { return collectiveOpName(c) == kind; });
        if (op == plan::kCollectives.end() || !(sent > 0)) continue;
        double calls = 0;
        for (const auto& [k, c] : report.commCallsPerStep)
            if (k == kind) calls = c;
        int group = shardGroup;
        if (*op == CollectiveOp::TpAllReduce)
            group = t;
        else if (*op == CollectiveOp::AllReduce && report.strategy == "fsdp_hybrid")
            group = dp / shardGroup;
        else if (*op == CollectiveOp::AllReduce || *op == CollectiveOp::Broadcast)
            group = dp;
        estimate += theory::estimateCollectives(theory::kNvlinkH100, *op, sent, calls, group);
    }
    if (!(estimate.seconds() > 0)) return {};
    const std::size_t steps = it->exposedComm.fractionPerStep.size();
    const QString link = QString::fromUtf8(theory::kNvlinkH100.name.data(),
                                           static_cast<qsizetype>(theory::kNvlinkH100.name.size()));
    const double measured = steps == 0 ? 0
                                       : static_cast<double>(it->exposedComm.commUnionNs) * 1e-9 /
                                             static_cast<double>(steps);
    if (measured > 0)
        return QCoreApplication::translate("RunLabels",
                                           "<b>On %1</b>: ≈ %2 a step (estimate; here %3).")
            .arg(link, millisecondsText(estimate.seconds()), millisecondsText(measured));
    return QCoreApplication::translate("RunLabels", "<b>On %1</b>: ≈ %2 a step (estimate).")
        .arg(link, millisecondsText(estimate.seconds()));
}

QString gpuLinkEstimateExplanation() {
    return QCoreApplication::translate(
               "RunLabels",
               "On GPUs: an estimate, not a measurement, and an optimistic one. Each collective "
               "this rank called in a step is priced on a ring over NVLink 4 between the H100 GPUs "
               "of one node (up to 8): a latency per call and per ring step (%1 µs + %2 µs a step, "
               "the latency of NCCL's low-latency protocol) plus the bytes the rank sent at a bus "
               "bandwidth of %3 GB/s (a large message's). No contention and no overlap with "
               "compute; the gradient norm's scalar all-reduces are not in the run's traffic "
               "figures. GPUs also compute faster, so the exposed share on a GPU cluster depends "
               "on both.")
        .arg(theory::kNvlinkH100.callLatencyUs)
        .arg(theory::kNvlinkH100.hopLatencyUs)
        .arg(theory::kNvlinkH100.busGBs);
}

} // namespace shardscope::widgets
