#include "playback/explain_text.h"

#include "common/byte_format.h"
#include "common/category_palette.h"
#include "common/run_labels.h"
#include "core/step_number.h"
#include "replay/flow_state.h"
#include "replay/playback_nav.h"

#include <QStringList>
#include <algorithm>

namespace shardscope::widgets {
namespace {

// An all-gather is explained by the compute it serves: the next compute of the same unit on
// the same rank, within the step. A few events ahead in a real run; the cap bounds the search.
constexpr std::uint64_t kLookahead = 200000;

Phase servedPhase(const replay::ReplayModel& m, std::uint64_t i) {
    const Event& begin = m.event(i);
    for (std::uint64_t j = i + 1; j < m.eventCount() && j <= i + kLookahead; ++j) {
        const Event& e = m.event(j);
        if (e.rank != begin.rank) continue;
        if (e.kind == EventKind::StepEnd) break;
        if (e.kind == EventKind::ComputeBegin && e.unit == begin.unit)
            return replay::phaseGroup(e.phase);
    }
    return Phase::None;
}

bool replicated(const replay::RunInfo& info) {
    return info.strategy == "ddp";
}

// The rank's next event for the same unit: a host → device copy right before an all-gather
// brings an offloaded parameter shard to the device; any other carries updated weights.
bool feedsAllGather(const replay::ReplayModel& m, std::uint64_t i) {
    const Event& begin = m.event(i);
    for (std::uint64_t j = i + 1; j < m.eventCount() && j <= i + kLookahead; ++j) {
        const Event& e = m.event(j);
        if (e.rank != begin.rank || e.kind == EventKind::TransferEnd) continue;
        if (e.kind == EventKind::StepEnd || e.kind == EventKind::ComputeBegin) return false;
        if (e.kind == EventKind::CollectiveBegin)
            return e.collective == CollectiveOp::AllGather && e.unit == begin.unit;
    }
    return false;
}

// How long a transfer that ends at event i took: its TransferBegin on the same rank (0 if not
// within the lookahead).
std::uint64_t transferNs(const replay::ReplayModel& m, std::uint64_t i) {
    const Event& end = m.event(i);
    for (std::uint64_t j = i; j-- > 0 && i - j <= kLookahead;) {
        const Event& e = m.event(j);
        if (e.rank == end.rank && e.kind == EventKind::TransferBegin &&
            e.transfer == end.transfer && e.unit == end.unit)
            return end.timeNs > e.timeNs ? end.timeNs - e.timeNs : 0;
    }
    return 0;
}

QString bytes(std::uint64_t b) {
    return formatDecimal(static_cast<double>(b));
}

// Bytes off the device (ZeRO-Offload: host; ZeRO-Infinity: NVMe): where they live and why the
// device's capacity does not count them.
QString offTierSentence(const Event& e, const QString& rank, const QString& unit) {
    const bool optimizer = e.category == Category::MasterFp32 || e.category == Category::AdamM ||
                           e.category == Category::AdamV;
    if (e.kind == EventKind::Free)
        return Explain::tr("Rank %1 frees %2 of %3 (%4) in %5.")
            .arg(rank, bytes(e.bytes), categoryLabel(e.category), unit, tierLabel(e.tier));
    if (e.tier == Tier::Nvme)
        return Explain::tr("Rank %1 places %2 of %3 for %4 in its NVMe file (ZeRO-Infinity): it is "
                           "read back through host staging "
                           "buffers when the update needs it, so neither device nor host memory "
                           "holds it between steps.")
            .arg(rank, bytes(e.bytes), categoryLabel(e.category), unit);
    if (optimizer)
        return Explain::tr("Rank %1 keeps %2 of %3 for %4 in host memory (ZeRO-Offload): the CPU "
                           "runs its AdamW update, and the "
                           "device's capacity does not count these bytes.")
            .arg(rank, bytes(e.bytes), categoryLabel(e.category), unit);
    switch (e.category) {
    case Category::GradShard:
        return Explain::tr("Rank %1 allocates %2 in host memory for its shard of %3's gradient: it "
                           "is copied there from the device "
                           "after the reduce-scatter, for the CPU's optimizer step.")
            .arg(rank, bytes(e.bytes), unit);
    case Category::ParamShard:
        return Explain::tr("Rank %1 keeps its %2 shard of %3's parameters in host memory: it is "
                           "copied to the device before each "
                           "all-gather.")
            .arg(rank, bytes(e.bytes), unit);
    default:
        return Explain::tr("Rank %1 allocates %2 of host staging (%3) for %4: copies between "
                           "device, host and NVMe pass through it.")
            .arg(rank, bytes(e.bytes), categoryLabel(e.category), unit);
    }
}

// A T × D mesh: the ranks a collective of e's ran in with e's rank (plan/mesh.h's groups),
// e.g. "2" or "0, 4, 6"; empty without a mesh or when the groups are unknown.
QString partnersOf(const Event& e, const replay::RunInfo& info) {
    if (info.tensorParallel <= 1) return {};
    for (const auto& g : replay::collectiveMembers(e.collective, e.peers, info.worldSize,
                                                   info.tensorParallel, info.pipeParallel)) {
        if (std::find(g.begin(), g.end(), e.rank) == g.end()) continue;
        QStringList others;
        for (int r : g)
            if (r != e.rank) others << QString::number(r);
        return others.join(QStringLiteral(", "));
    }
    return {};
}

// The ranks a shard splits a unit over: the data-parallel ones (D = N / T on a mesh).
int shardRanks(const replay::RunInfo& info) {
    return std::max(info.worldSize / std::max(info.tensorParallel, 1), 1);
}

} // namespace

QString Explain::explain(const replay::ReplayModel& model, std::uint64_t index,
                         const replay::RunInfo& info) {
    if (model.eventCount() == 0) return tr("No events yet: start a run or open a recording.");
    if (index == 0) return tr("The run has not started yet: press Play or step forward.");
    return sentence(model, std::min(index, model.eventCount()) - 1, info);
}

QString Explain::explainForRank(const replay::ReplayModel& model, std::uint64_t index,
                                const replay::RunInfo& info, int rank) {
    if (model.eventCount() == 0 || index == 0) return explain(model, index, info);
    if (const auto k = eventForRank(model, index, rank)) return sentence(model, *k, info);
    return tr("Rank %1 has not logged an event yet at this point of the replay.").arg(rank);
}

std::optional<std::uint64_t> Explain::eventForRank(const replay::ReplayModel& model,
                                                   std::uint64_t index, int rank) {
    if (model.eventCount() == 0 || index == 0) return std::nullopt;
    const std::uint64_t last = std::min(index, model.eventCount()) - 1;
    // Back through this step and the one before: a seek costs at most two steps' events.
    const std::size_t step = model.stepIndexOf(last);
    const std::uint64_t floor = model.step(step > 0 ? step - 1 : 0).firstEvent;
    for (std::uint64_t k = last + 1; k-- > floor;)
        if (model.event(k).rank == rank) return k;
    return std::nullopt;
}

QString Explain::transferSentence(const replay::ReplayModel& model, std::uint64_t i,
                                  const replay::RunInfo& info) {
    const Event& e = model.event(i);
    const QString rank = QString::number(e.rank);
    const QString unit =
        e.unit >= 0 ? QString::fromStdString(info.unitName(e.unit)) : tr("the model");
    if (e.kind == EventKind::TransferWait)
        return tr("Rank %1 waits for the %2 of %3: the CPU optimizer needs that state now and the "
                  "transfer is not done — "
                  "this wait is exposed transfer time.")
            .arg(rank, transferLabel(e.transfer), unit);
    if (e.kind == EventKind::TransferEnd) {
        const std::uint64_t ns = transferNs(model, i);
        if (ns == 0)
            return tr("Rank %1 sees the %2 of %3 (%4) complete.")
                .arg(rank, transferLabel(e.transfer), unit, bytes(e.bytes));
        return tr("Rank %1 sees the %2 of %3 (%4) complete, at %5 GB/s.")
            .arg(rank, transferLabel(e.transfer), unit, bytes(e.bytes))
            .arg(static_cast<double>(e.bytes) / static_cast<double>(ns), 0, 'f', 2);
    }
    switch (e.transfer) {
    case Transfer::DeviceToHost:
        if (info.strategy == "zero1")
            return tr("Rank %1 copies its slice of %2's all-reduced gradient (%3) device → host: "
                      "the optimizer runs on "
                      "the CPU, where the master weights and Adam's m and v live.")
                .arg(rank, unit, bytes(e.bytes));
        return tr("Rank %1 copies its reduced gradient shard of %2 (%3) device → host: its "
                  "reduce-scatter is done, and the "
                  "optimizer runs on the CPU, where the master weights and Adam's m and v live.")
            .arg(rank, unit, bytes(e.bytes));
    case Transfer::HostToDevice:
        if (feedsAllGather(model, i))
            return tr("Rank %1 brings its parameter shard of %2 (%3) host → device: the shard "
                      "lives in host memory, and the "
                      "all-gather that unshards the unit reads device memory.")
                .arg(rank, unit, bytes(e.bytes));
        return tr("Rank %1 sends %2's updated weights (%3, bf16) host → device: the CPU optimizer "
                  "has updated the master "
                  "copy, and the next forward computes with these.")
            .arg(rank, unit, bytes(e.bytes));
    case Transfer::NvmeRead:
        if (e.unit > 0)
            return tr("Rank %1 starts reading %2's optimizer state (master, m, v: %3) from NVMe; "
                      "the read is in flight "
                      "while %4 updates on the CPU.")
                .arg(rank, unit, bytes(e.bytes), QString::fromStdString(info.unitName(e.unit - 1)));
        return tr("Rank %1 starts reading %2's optimizer state (master, m, v: %3) from NVMe; the "
                  "first unit has nothing "
                  "to overlap with, so the rank waits for it.")
            .arg(rank, unit, bytes(e.bytes));
    case Transfer::NvmeWrite:
        if (e.step < 0)
            return tr("Rank %1 writes %2's initial optimizer state (%3) to its NVMe file.")
                .arg(rank, unit, bytes(e.bytes));
        return tr("Rank %1 writes %2's updated optimizer state (%3) back to NVMe; the write drains "
                  "while the next unit "
                  "updates.")
            .arg(rank, unit, bytes(e.bytes));
    case Transfer::None:
        break;
    }
    return tr("Rank %1 moves %2 of %3 between tiers.").arg(rank, bytes(e.bytes), unit);
}

QString Explain::sentence(const replay::ReplayModel& model, std::uint64_t i,
                          const replay::RunInfo& info) {
    const Event& e = model.event(i);
    const int n = std::max(e.peers > 0 ? e.peers : info.worldSize, 1);
    const auto un = static_cast<std::uint64_t>(n);
    const QString rank = QString::number(e.rank);
    const QString unit =
        e.unit >= 0 ? QString::fromStdString(info.unitName(e.unit)) : tr("the model");
    switch (e.kind) {
    case EventKind::TransferBegin:
    case EventKind::TransferEnd:
    case EventKind::TransferWait:
        return transferSentence(model, i, info);
    case EventKind::StepBegin:
        return tr("Rank %1 begins step %2.").arg(rank).arg(displayStep(e.step, info.stepsBefore));
    case EventKind::StepEnd:
        return tr("Rank %1 finishes step %2.").arg(rank).arg(displayStep(e.step, info.stepsBefore));
    case EventKind::CollectiveBegin:
        switch (e.collective) {
        case CollectiveOp::AllGather: {
            const QString shard = bytes(e.bytes / un), full = bytes(e.bytes);
            const Phase p = servedPhase(model, i);
            if (const QString with = partnersOf(e, info); !with.isEmpty() && e.unit >= 0)
                return tr("Rank %1 all-gathers its TP slice of %2 with rank(s) %3 of its "
                          "data-parallel group: %4 shards of %5 become %6 of full parameters (ZeRO "
                          "splits the storage; every rank then computes the whole slice).")
                    .arg(rank, unit, with)
                    .arg(n)
                    .arg(shard, full);
            if (p == Phase::Forward || p == Phase::Backward)
                return tr("Rank %1 all-gathers %2: %3 shards of %4 become %5 of full parameters, "
                          "freed after its %6.")
                    .arg(rank, unit)
                    .arg(n)
                    .arg(shard, full, phaseLabel(p));
            return tr("Rank %1 all-gathers %2: %3 shards of %4 become %5 of full parameters.")
                .arg(rank, unit)
                .arg(n)
                .arg(shard, full);
        }
        case CollectiveOp::ReduceScatter:
            return tr("Rank %1 reduce-scatters %2's gradients: %3 ranks' %4 gradients are summed "
                      "chunk by chunk, and each rank keeps its %5 shard.")
                .arg(rank, unit)
                .arg(n)
                .arg(bytes(e.bytes), bytes(e.bytes / un));
        case CollectiveOp::AllReduce:
            if (e.unit < 0 &&
                replay::collectiveScopeAt(model, i) == replay::CollectiveScope::GradNorm)
                return tr("Rank %1 all-reduces %2 with the other %3 ranks: the gradient norm every "
                          "rank needs to clip alike.")
                    .arg(rank, bytes(e.bytes))
                    .arg(n - 1);
            if (e.unit < 0) // a bucket spanning units
                return tr("Rank %1 all-reduces a bucket of several units' gradients (%2): every "
                          "rank ends with the same sum.")
                    .arg(rank, bytes(e.bytes));
            return tr("Rank %1 all-reduces %2's gradients (%3): every rank ends with the same sum.")
                .arg(rank, unit, bytes(e.bytes));
        case CollectiveOp::Broadcast:
            return tr("Rank %1 takes part in a broadcast of %2.").arg(rank, bytes(e.bytes));
        case CollectiveOp::TpAllReduce: {
            const QString with = partnersOf(e, info);
            const QString group = with.isEmpty()
                                      ? tr("its tensor-parallel group")
                                      : tr("rank(s) %1 of its tensor-parallel group").arg(with);
            if (replay::computePhaseAt(model, i) == Phase::Backward)
                return tr("Rank %1 all-reduces %2 of %3's partial input gradients with %4: each "
                          "computed them from its own heads / MLP columns only, so they are summed "
                          "(TP splits the computation, on the critical path).")
                    .arg(rank, bytes(e.bytes), unit, group);
            return tr("Rank %1 all-reduces %2 of %3's partial activations with %4: each computed "
                      "the output from its own heads / MLP columns only, so they are summed (TP "
                      "splits the computation, on the critical path).")
                .arg(rank, bytes(e.bytes), unit, group);
        }
        case CollectiveOp::PipeSend:
            if (replay::computePhaseAt(model, i) == Phase::Backward)
                return tr("Rank %1 sends the gradient of its stage's input (%2, after %3) to the "
                          "previous pipeline stage.")
                    .arg(rank, bytes(e.bytes), unit);
            return tr("Rank %1 sends its stage's output (%2, from %3) to the next pipeline stage.")
                .arg(rank, bytes(e.bytes), unit);
        case CollectiveOp::PipeRecv:
            return tr("Rank %1 waits for %2 from its neighbouring pipeline stage: until it "
                      "arrives, this stage idles (the bubble).")
                .arg(rank, bytes(e.bytes));
        case CollectiveOp::None:
            break;
        }
        break;
    case EventKind::CollectiveEnd:
        switch (e.collective) {
        case CollectiveOp::AllGather:
            return tr("Rank %1 holds %2's full parameters (%3): the unit is unsharded.")
                .arg(rank, unit, bytes(e.bytes));
        case CollectiveOp::ReduceScatter:
            return tr("Rank %1 holds its summed shard of %2's gradient (%3 of %4).")
                .arg(rank, unit, bytes(e.bytes / un), bytes(e.bytes));
        case CollectiveOp::AllReduce:
            if (e.unit < 0)
                return tr("Rank %1 has the all-reduced value, the same on every rank.").arg(rank);
            return tr("Rank %1 has the summed gradients of %2 (%3), identical on every rank.")
                .arg(rank, unit, bytes(e.bytes));
        case CollectiveOp::Broadcast:
            return tr("Rank %1 has received the broadcast (%2).").arg(rank, bytes(e.bytes));
        case CollectiveOp::TpAllReduce:
            return tr("Rank %1 holds the full activation of %2 (%3), the same on every rank of its "
                      "tensor-parallel group.")
                .arg(rank, unit, bytes(e.bytes));
        case CollectiveOp::PipeSend:
            return tr("Rank %1 has posted the message (%2); it computes on while its neighbour "
                      "copies it.")
                .arg(rank, bytes(e.bytes));
        case CollectiveOp::PipeRecv:
            return tr("Rank %1 has received %2 from its neighbouring stage.")
                .arg(rank, bytes(e.bytes));
        case CollectiveOp::None:
            break;
        }
        break;
    case EventKind::Alloc:
        if (e.tier != Tier::Device) return offTierSentence(e, rank, unit);
        switch (e.category) {
        case Category::ParamFull:
            if (replicated(info))
                return tr("Rank %1 allocates %2 for %3's parameters: a full replica, as DDP keeps "
                          "on every rank.")
                    .arg(rank, bytes(e.bytes), unit);
            return tr("Rank %1 allocates %2 for %3's full parameters, ready to unshard.")
                .arg(rank, bytes(e.bytes), unit);
        case Category::ParamShard:
            return tr("Rank %1 allocates its %2 shard of %3's parameters: 1/%4 of the unit.")
                .arg(rank, bytes(e.bytes), unit)
                .arg(shardRanks(info));
        case Category::GradFull:
            return tr("Rank %1 allocates %2 to hold %3's full gradient.")
                .arg(rank, bytes(e.bytes), unit);
        case Category::GradShard:
            return tr("Rank %1 allocates %2 for its shard of %3's gradient.")
                .arg(rank, bytes(e.bytes), unit);
        case Category::MasterFp32:
        case Category::AdamM:
        case Category::AdamV:
            return tr("Rank %1 allocates %2 of optimizer state (%3) for %4.")
                .arg(rank, bytes(e.bytes), categoryLabel(e.category), unit);
        case Category::Activation:
            return tr("Rank %1 keeps %2 of %3's activations for the backward pass.")
                .arg(rank, bytes(e.bytes), unit);
        case Category::CommBuffer:
            return tr("Rank %1 allocates a %2 communication buffer.").arg(rank, bytes(e.bytes));
        case Category::Workspace:
            return tr("Rank %1 allocates %2 of temporary workspace for %3.")
                .arg(rank, bytes(e.bytes), unit);
        }
        break;
    case EventKind::Free:
        if (e.tier != Tier::Device) return offTierSentence(e, rank, unit);
        switch (e.category) {
        case Category::ParamFull:
            if (replicated(info))
                return tr("Rank %1 frees %2 of %3's parameters.").arg(rank, bytes(e.bytes), unit);
            return tr("Rank %1 reshards %2: it frees %3 of full parameters and keeps only its %4 "
                      "shard.")
                .arg(rank, unit, bytes(e.bytes),
                     bytes(e.bytes / static_cast<std::uint64_t>(shardRanks(info))));
        case Category::GradFull:
            return tr("Rank %1 frees %2's full gradient (%3); only its shard remains.")
                .arg(rank, unit, bytes(e.bytes));
        case Category::Activation:
            return tr("Rank %1 frees %2 of %3's activations: the backward pass has used them.")
                .arg(rank, bytes(e.bytes), unit);
        case Category::Workspace:
            return tr("Rank %1 frees %2 of temporary workspace.").arg(rank, bytes(e.bytes));
        default:
            return tr("Rank %1 frees %2 of %3 (%4).")
                .arg(rank, bytes(e.bytes), categoryLabel(e.category), unit);
        }
    case EventKind::ComputeBegin:
        switch (e.phase) {
        case Phase::Forward:
            if (replicated(info))
                return tr("Rank %1 runs %2's forward on its own copy of the parameters.")
                    .arg(rank, unit);
            return tr("Rank %1 runs %2's forward on the gathered full parameters.").arg(rank, unit);
        case Phase::Backward:
            if (info.pipeParallel > 1 && info.pipeSchedule == "zb1") {
                if (e.unit == 0) // the embedding: no input to differentiate
                    return tr("Rank %1 keeps %2's output gradient for later: the embedding has no "
                              "input gradient, all of its backward is weight gradients (W).")
                        .arg(rank, unit);
                if (info.stageOf(e.rank) == 0)
                    return tr("Rank %1 runs %2's backward for its input only; its weight "
                              "gradients come later (W).")
                        .arg(rank, unit);
                return tr("Rank %1 runs %2's backward for its input only: the gradient the "
                          "previous stage waits for. Its weight gradients come later (W).")
                    .arg(rank, unit);
            }
            return tr("Rank %1 runs %2's backward: gradients for its parameters and its input.")
                .arg(rank, unit);
        case Phase::WeightGrad:
            return tr("Rank %1 computes %2's weight gradients (W), deferred from its backward: "
                      "no stage waits for them, so the zero-bubble schedule runs them where the "
                      "pipeline would idle.")
                .arg(rank, unit);
        case Phase::Recompute:
            return tr("Rank %1 recomputes %2's forward activations (activation checkpointing "
                      "trades this compute for memory).")
                .arg(rank, unit);
        case Phase::Optimizer:
            if (replicated(info))
                return tr("Rank %1 updates all parameters with AdamW, as every other rank does.")
                    .arg(rank);
            return tr("Rank %1 updates only its shard of the parameters with AdamW: its optimizer "
                      "state covers 1/%2 of the model.")
                .arg(rank)
                .arg(info.worldSize);
        case Phase::Save:
            return tr("Rank %1 writes its part of the checkpoint: only the elements it owns "
                      "(replicated state split over its holders), no padding.")
                .arg(rank);
        case Phase::None:
            return tr("Rank %1 starts computing.").arg(rank);
        }
        break;
    case EventKind::ComputeEnd:
        if (e.phase == Phase::Optimizer)
            return tr("Rank %1 finishes the optimizer step.").arg(rank);
        if (e.phase == Phase::Save)
            return tr("Rank %1 has written and synced its checkpoint file (%2).")
                .arg(rank, bytes(e.bytes));
        return tr("Rank %1 finishes %2's %3.").arg(rank, unit, phaseLabel(e.phase));
    }
    return tr("Rank %1: %2.")
        .arg(rank, QString::fromUtf8(eventKindName(e.kind).data(),
                                     static_cast<qsizetype>(eventKindName(e.kind).size())));
}

QString Explain::checkpointPadding(const QString& unit, std::uint64_t elements, int n,
                                   std::uint64_t padN, int m, std::uint64_t padM) {
    return tr("Padding moves with N: %1's flat buffer of %2 elements is padded to a multiple of "
              "the shard count so every "
              "shard has the same size — %3 padding element(s) at N = %4, %5 at M = %6. A "
              "checkpoint stores element "
              "ranges of the unpadded unit and never the padding, so it loads at any N.")
        .arg(unit, formatBytesExact(elements), formatBytesExact(padN))
        .arg(n)
        .arg(formatBytesExact(padM))
        .arg(m);
}

QString Explain::reshardingAtLoad(int n, int m, int rank, std::size_t reads, std::size_t files,
                                  std::uint64_t bytes) {
    return tr("Resharding at load: each of the M = %1 new ranks computes the element ranges of its "
              "new shard and reads, "
              "from the N = %2 saved files, only the byte ranges that overlap them — element "
              "ranges are mapped, padded "
              "bytes never are. New rank %3 makes %n read(s) from %4 file(s), %5 in all.",
              nullptr, static_cast<int>(reads))
        .arg(m)
        .arg(n)
        .arg(rank)
        .arg(files)
        .arg(formatDecimal(static_cast<double>(bytes)));
}

} // namespace shardscope::widgets
