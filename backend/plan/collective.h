#pragma once
// What each collective costs on the wire: the one table of names, ring "sent bytes" and
// nccl-tests' bus-bandwidth factor, used by the theory engine, the communicators' statistics,
// the report, the GUI and the benchmarks alike.
//
// nccl-tests (doc/PERFORMANCE.md): algbw = payload bytes / time, busbw = algbw × factor, with
// factor (N−1)/N for all-gather and reduce-scatter, 2(N−1)/N for all-reduce and 1 for
// broadcast and a point-to-point message — the fraction of the payload each rank puts on the
// wire in the ring algorithm, so busbw is comparable to the link's speed whatever N is (a
// pipeline receive sends nothing: its sender counts the bytes).
//
// Note: "payload" is the collective's full buffer per rank (nccl-tests' "size"): the gathered
// buffer for all-gather, the input for reduce-scatter, the buffer for all-reduce/broadcast.
#include "core/event.h"

#include <array>
#include <cstdint>
#include <string_view>

namespace shardscope::plan {

// The display names are English and marked for Qt's lupdate (translations/CMakeLists.txt reads
// this header), so the GUI translates exactly these texts in trContext; the macro is the text.
#define SHARDSCOPE_TRANSLATE_NOOP(context, text) text

struct CollectiveTraits {
    CollectiveOp op;
    std::string_view wireName;    // events, reports, JSON: core/event.h's collectiveOpName
    std::string_view displayName; // human-facing English ("all-gather"): CLI, messages, the GUI
    std::uint32_t busNumerator;   // busbw factor = busNumerator·(N−1)/N; 0: no factor (None)
    bool fullPayload; // broadcast, point-to-point: factor 1, the sender sends the whole payload
    std::string_view trContext = "RunLabels"; // the GUI's translation context of displayName
};

inline constexpr std::array<CollectiveTraits, kCollectiveOpCount> kCollectiveTraits = {{
    {CollectiveOp::None, collectiveOpName(CollectiveOp::None), "none", 0, false},
    {CollectiveOp::AllGather, collectiveOpName(CollectiveOp::AllGather),
     SHARDSCOPE_TRANSLATE_NOOP("RunLabels", "all-gather"), 1, false},
    {CollectiveOp::ReduceScatter, collectiveOpName(CollectiveOp::ReduceScatter),
     SHARDSCOPE_TRANSLATE_NOOP("RunLabels", "reduce-scatter"), 1, false},
    {CollectiveOp::AllReduce, collectiveOpName(CollectiveOp::AllReduce),
     SHARDSCOPE_TRANSLATE_NOOP("RunLabels", "all-reduce"), 2, false},
    {CollectiveOp::Broadcast, collectiveOpName(CollectiveOp::Broadcast),
     SHARDSCOPE_TRANSLATE_NOOP("RunLabels", "broadcast"), 0, true},
    {CollectiveOp::TpAllReduce, collectiveOpName(CollectiveOp::TpAllReduce),
     SHARDSCOPE_TRANSLATE_NOOP("RunLabels", "tensor-parallel all-reduce"), 2, false},
    {CollectiveOp::PipeSend, collectiveOpName(CollectiveOp::PipeSend),
     SHARDSCOPE_TRANSLATE_NOOP("RunLabels", "pipeline send"), 0, true},
    {CollectiveOp::PipeRecv, collectiveOpName(CollectiveOp::PipeRecv),
     SHARDSCOPE_TRANSLATE_NOOP("RunLabels", "pipeline receive"), 0, true},
}};

constexpr const CollectiveTraits& traits(CollectiveOp op) {
    return kCollectiveTraits[static_cast<std::size_t>(op)];
}
// The display name as a C string (the table's literals end in '\0'): for messages that take one.
constexpr const char* displayText(CollectiveOp op) {
    return traits(op).displayName.data();
}

// The collectives a step can call (every CollectiveOp but None), in enum order.
inline constexpr std::array<CollectiveOp, kCollectiveOpCount - 1> kCollectives = {
    CollectiveOp::AllGather, CollectiveOp::ReduceScatter, CollectiveOp::AllReduce,
    CollectiveOp::Broadcast, CollectiveOp::TpAllReduce,   CollectiveOp::PipeSend,
    CollectiveOp::PipeRecv};

// nccl-tests' busbw / algbw for `ranks` participants (0 for None; 0 for a lone rank except
// broadcast, which stays 1).
double busBandwidthFactor(CollectiveOp op, int ranks);
// busbw in bytes per second for `payload` bytes moved in `seconds` (0 when seconds ≤ 0).
double busBandwidth(CollectiveOp op, std::uint64_t payload, double seconds, int ranks);

// Bytes one rank sends for `payload` bytes over `ranks` participants in the ring algorithm,
// rounded down: payload·busNumerator·(N−1)/N; a broadcast root sends the whole payload. 0 for
// one participant.
std::uint64_t sentBytes(CollectiveOp op, std::uint64_t payload, std::uint64_t ranks);

} // namespace shardscope::plan
