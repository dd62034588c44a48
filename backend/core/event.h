#pragma once
// The event vocabulary of a run: every allocation and free, compute span, collective, tier
// transfer and step boundary of one rank, with a monotonic timestamp. The GUI replays these; the
// protocol and the recording file (protocol/protocol.h) serialise them.
//
// Note: Event is one flat record (not a variant) so the codec can write it field by field;
// the fields that do not apply to a kind keep their defaults. Enumerator values are part of
// the recording format: append new values at the end (before the kCount line), never reorder.
// Each enum's kCount sizes its name table (static_assert'ed below) and the decoder's range
// check; protocol/protocol.cpp asserts the counts fit the record's u8 fields.
#include "core/categories.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>

namespace shardscope {

inline constexpr std::int32_t kNoUnit = -1;

enum class EventKind : std::uint8_t {
    Alloc,
    Free,
    ComputeBegin,
    ComputeEnd,
    CollectiveBegin,
    CollectiveEnd,
    StepBegin,
    StepEnd,
    TransferBegin,
    TransferEnd,
    TransferWait,
};
inline constexpr std::size_t kEventKindCount = 11;

// What a compute span is doing. Recompute is the forward replay of a checkpointed block
// inside backward, so the timeline can show the extra work checkpointing costs.
// Save is a rank writing its part of a checkpoint (bytes: its file's, on the span's end).
// WeightGrad is the second half of a split backward (the zb1 pipeline schedule): a unit's
// weight gradients, computed after its input gradients (Backward) have left for the previous
// stage.
enum class Phase : std::uint8_t { None, Forward, Backward, Optimizer, Recompute, Save, WeightGrad };
inline constexpr std::size_t kPhaseCount = 7;

// The one collective vocabulary: events, the communicators' statistics, the theory engine's
// volumes and plan/collective.h's traits table are all indexed by it. None (0) marks events
// that are not collectives. TpAllReduce is the all-reduce of activations (forward) and input
// gradients (backward) over a tensor-parallel group: the same primitive as AllReduce, its own
// kind so reports, theory and the timeline tell TP traffic from the data-parallel traffic.
// PipeSend and PipeRecv are pipeline parallelism's point-to-point messages between neighbouring
// stages (activations forward, their gradients backward): a send is posted and returns (its
// span is the posting), a receive spans the wait for the message and its copy.
enum class CollectiveOp : std::uint8_t {
    None,
    AllGather,
    ReduceScatter,
    AllReduce,
    Broadcast,
    TpAllReduce,
    PipeSend,
    PipeRecv
};
inline constexpr std::size_t kCollectiveOpCount = 8;

// A copy of offloaded state across tiers (TransferBegin / TransferEnd, bytes moved, unit).
// Device ↔ host copies run on the rank's thread and wait for the copy: the rank computes nothing
// while one runs. NVMe reads and writes are asynchronous: begin when the rank submits them, end
// when the rank sees them complete (it polls at each unit of the update, so an end is at most one
// unit late), and the rank computes meanwhile — unless it needs the data first: TransferWait
// (same unit and direction) marks the moment it starts waiting, until the TransferEnd.
enum class Transfer : std::uint8_t { None, DeviceToHost, HostToDevice, NvmeRead, NvmeWrite };
inline constexpr std::size_t kTransferCount = 5;
// Whether the rank's thread does the transfer itself (and so cannot compute meanwhile).
constexpr bool transferBlocks(Transfer t) {
    return t == Transfer::DeviceToHost || t == Transfer::HostToDevice;
}

struct Event {
    std::uint64_t timeNs = 0; // monotonic clock (steady_clock), not wall time
    std::int32_t rank = 0;
    EventKind kind = EventKind::Alloc;
    // Alloc / Free
    Category category = Category::Workspace;
    Tier tier = Tier::Device;
    std::uint64_t bytes = 0; // Alloc/Free: buffer size; Collective*: payload per rank
    std::int32_t unit = kNoUnit;
    // ComputeBegin / ComputeEnd
    Phase phase = Phase::None;
    // CollectiveBegin / CollectiveEnd
    CollectiveOp collective = CollectiveOp::None;
    std::int32_t peers = 0; // ranks taking part (the group size)
    // TransferBegin / TransferEnd (bytes: what the transfer moves; unit: whose state)
    Transfer transfer = Transfer::None;
    // StepBegin / StepEnd (and stamped on every event so a replay can group them)
    std::int64_t step = -1;
    // The micro-batch of the step the event belongs to (gradient accumulation's micro-steps, a
    // pipeline's micro-batches: 0 … M − 1), stamped like the step; −1 outside any (the optimizer,
    // the states' allocations).
    std::int16_t microBatch = -1;
};
// The most micro-batches a step may have (plan::kMaxMicroBatches, runconfig's --grad-accum
// limit): a recorded index beyond it is damage.
inline constexpr std::int16_t kMaxMicroBatches = 4096;

// Wire and JSON names: index = enumerator value.
inline constexpr std::array<std::string_view, kEventKindCount> kEventKindNames = {
    "alloc",          "free",       "compute_begin", "compute_end",    "collective_begin",
    "collective_end", "step_begin", "step_end",      "transfer_begin", "transfer_end",
    "transfer_wait"};
inline constexpr std::array<std::string_view, kPhaseCount> kPhaseNames = {
    "none", "forward", "backward", "optimizer", "recompute", "save", "weight_grad"};
inline constexpr std::array<std::string_view, kCollectiveOpCount> kCollectiveOpNames = {
    "none",      "all_gather",    "reduce_scatter", "all_reduce",
    "broadcast", "tp_all_reduce", "pp_send",        "pp_recv"};
inline constexpr std::array<std::string_view, kTransferCount> kTransferNames = {
    "none", "device_to_host", "host_to_device", "nvme_read", "nvme_write"};
static_assert(kEventKindNames.size() == static_cast<std::size_t>(EventKind::TransferWait) + 1);
static_assert(kTransferNames.size() == static_cast<std::size_t>(Transfer::NvmeWrite) + 1);
static_assert(kPhaseNames.size() == static_cast<std::size_t>(Phase::WeightGrad) + 1);
static_assert(kCollectiveOpNames.size() == static_cast<std::size_t>(CollectiveOp::PipeRecv) + 1);

constexpr std::string_view eventKindName(EventKind k) {
    return kEventKindNames[static_cast<std::size_t>(k)];
}
constexpr std::string_view phaseName(Phase p) {
    return kPhaseNames[static_cast<std::size_t>(p)];
}
constexpr std::string_view transferName(Transfer t) {
    return kTransferNames[static_cast<std::size_t>(t)];
}
constexpr std::string_view collectiveOpName(CollectiveOp c) {
    return kCollectiveOpNames[static_cast<std::size_t>(c)];
}

// Monotonic nanoseconds since an arbitrary epoch (std::chrono::steady_clock).
std::uint64_t monotonicNs();

// Where events go. Empty = nobody listens (the ledger still counts bytes).
using EventSink = std::function<void(const Event&)>;

} // namespace shardscope
