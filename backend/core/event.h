#pragma once
// The event vocabulary of a run: every allocation and free, compute span, collective and step
// boundary of one rank, with a monotonic timestamp. The GUI replays these; the protocol and the
// recording file (core/protocol.h, a later issue) serialise them.
//
// Note: Event is one flat record (not a variant) so the codec can write it field by field;
// the fields that do not apply to a kind keep their defaults. Enumerator values are part of
// the recording format: append new values at the end, never reorder.
#include <cstdint>
#include <functional>
#include <string_view>

#include "core/categories.h"

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
};

// What a compute span is doing. Recompute is the forward replay of a checkpointed block
// inside backward, so the timeline can show the extra work checkpointing costs.
enum class Phase : std::uint8_t { None, Forward, Backward, Optimizer, Recompute };

// Collective operations as they appear in events (same order as theory::CollectiveKind).
enum class CollectiveOp : std::uint8_t { None, AllGather, ReduceScatter, AllReduce, Broadcast };

struct Event {
    std::uint64_t timeNs = 0;  // monotonic clock (steady_clock), not wall time
    std::int32_t rank = 0;
    EventKind kind = EventKind::Alloc;
    // Alloc / Free
    Category category = Category::Workspace;
    Tier tier = Tier::Device;
    std::uint64_t bytes = 0;   // Alloc/Free: buffer size; Collective*: payload per rank
    std::int32_t unit = kNoUnit;
    // ComputeBegin / ComputeEnd
    Phase phase = Phase::None;
    // CollectiveBegin / CollectiveEnd
    CollectiveOp collective = CollectiveOp::None;
    std::int32_t peers = 0;    // ranks taking part (the group size)
    // StepBegin / StepEnd (and stamped on every event so a replay can group them)
    std::int64_t step = -1;
};

std::string_view eventKindName(EventKind k);   // alloc free compute_begin … step_end
std::string_view phaseName(Phase p);           // none forward backward optimizer recompute
std::string_view collectiveOpName(CollectiveOp c); // none all_gather reduce_scatter …

// Monotonic nanoseconds since an arbitrary epoch (std::chrono::steady_clock).
std::uint64_t monotonicNs();

// Where events go. Empty = nobody listens (the ledger still counts bytes).
using EventSink = std::function<void(const Event&)>;

} // namespace shardscope
