#pragma once
// What the flow diagram shows at a playhead position, as a plain value: the collective in
// flight (or the last one, finished), which shard goes where, and each rank's place in the
// unit's unshard → compute → reshard cycle. Pure C++ so tests check it for a known collective.
//
// Collectives are matched across ranks by order within their group: the members of a group
// issue its collectives in the same order (MPI and NCCL require it), so rank r's i-th collective
// of a kind, unit and group is every member's i-th — ranks of different groups (TP groups,
// pipeline stages) may run different sequences. A pipeline message pairs a send with its
// receive: the i-th message across one stage boundary from one rank is its neighbour's i-th.
#include "core/span_pairing.h"
#include "replay/replay_model.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <vector>

namespace shardscope::replay {

// One collective as all ranks executed it.
struct CollectiveGroup {
    CollectiveOp op = CollectiveOp::None;
    std::int32_t unit = kNoUnit;
    std::uint64_t bytes = 0; // payload per rank (all-gather / reduce-scatter: the full buffer)
    std::int32_t peers = 0;
    std::int64_t step = -1;
    std::uint64_t firstBegin = 0;         // global event index of the earliest rank's begin
    std::uint64_t lastEnd = 0;            // … of the latest rank's end (eventCount if still open)
    std::uint64_t beginNs = 0, endNs = 0; // replay clock, earliest begin / latest end
    std::vector<std::uint64_t> beginEvent, endEvent; // per rank
    int sender = -1, receiver = -1; // a pipeline message's ends (the receiver may begin first)
    int member = -1;                // a collective's group among collectiveMembers' (−1: unknown)
};

class FlowIndex {
public:
    void reset(int worldSize);
    void update(const ReplayModel& model); // indexes steps not seen yet
    const std::vector<CollectiveGroup>& groups() const { return groups_; }
    // The last group any rank had begun before position k (events [0,k) applied); −1: none.
    std::ptrdiff_t groupAt(std::uint64_t k) const;
    // The group of one kind nearest the playhead k: the last such group begun before k when it
    // belongs to the playhead's step (or is still open), else the first one begun at or after k,
    // else the last one before k; −1 when the recording has none.
    template <class Pred>
    std::ptrdiff_t nearestGroup(std::uint64_t k, std::int64_t playheadStep, Pred matches) const;

private:
    // What a rank's collective is matched by: its kind (a message: PipeSend for both ends), its
    // unit, its group (the index of the rank's group among collectiveMembers'; a message: its
    // sender and receiver).
    struct Key {
        CollectiveOp op;
        std::int32_t unit;
        std::int32_t peers;
        int group;
        int receiver;
        auto operator<=>(const Key&) const = default;
    };
    Key keyOf(const Event& e, const ReplayModel& model);

    std::vector<CollectiveGroup> groups_;
    std::map<Key, std::vector<std::size_t>> byKey_; // groups of one key, in order
    // Each rank's group index among collectiveMembers(op, peers, …) (−1: none), built once.
    std::map<std::pair<CollectiveOp, std::int32_t>, std::vector<int>> groupOf_;
    std::pair<int, int> groupMesh_{0, 0};             // the T and P groupOf_ was built for
    std::vector<std::map<Key, std::size_t>> ordinal_; // per rank: collectives seen of each key
    // Per rank: the groups begun and not yet ended (a prefetch's all-gather stays open while other
    // collectives run), paired with their ends by core/span_pairing.h.
    std::vector<SpanPairing<std::size_t>> open_;
    std::size_t steps_ = 0;
    int worldSize_ = 0;
};

// What a collective moves. Its events name a unit only when it moves one unit's buffer; a
// bucket spanning several units (ZeRO-1/2's gradient reduce-scatter and updated-parameter
// all-gather, DDP's fused buckets) names none, and neither does the optimizer's all-reduce of
// the gradient norm (told apart by running inside the optimizer).
// A tensor-parallel all-reduce (over the TP group) sums the partial activations of one unit in
// forward, or its partial input gradients in backward.
enum class CollectiveScope : std::uint8_t { Unit, Bucket, GradNorm, TensorParallel };

// A rank's place in the cycle of the current collective's unit, or of the bucket / norm it moves.
enum class UnitCycle : std::uint8_t {
    ShardOnly, // holds only its shard (before the unshard, or the unit is not gathered)
    Gathering, // in the all-gather
    Gathered,  // full parameters live, not computing
    Computing, // forward / backward / recompute of the unit
    Freed,     // resharded: full parameters freed after use, the shard remains
    ReduceScattering,
    Reduced, // reduce-scatter done: holds the summed gradient shard
    AllReducing,
    AllReduced,     // holds the full summed gradient (DDP)
    GradientsReady, // a bucket's gradients computed, its reduction not begun
    SliceUpdated,   // ZeRO-1/2: updated its own slice, the all-gather of updates not begun
    GatheringUpdates,
    ParamsUpdated, // holds every rank's updated parameters
    NormPart,      // holds its part of the squared gradient norm
    NormSummed,    // holds the global norm, the same on every rank
    PartialSum,    // TP: holds its partial sum (its heads / MLP columns' share of the output)
    TpReducing,    // TP: in the all-reduce over its TP group
    FullSum,       // TP: holds the full activation (input gradient), the same across its TP group
};

struct FlowRank {
    UnitCycle cycle = UnitCycle::ShardOnly;
    Phase phase = Phase::None; // while computing
    bool inCollective = false;
    bool collectiveDone = false;
    double progress = 0; // this rank's share of its own collective span (1 once it ended)
};

struct FlowState {
    bool valid = false;  // false: no collective yet
    bool active = false; // some rank is still inside it
    CollectiveOp kind = CollectiveOp::None;
    CollectiveScope scope = CollectiveScope::Unit;
    std::int32_t unit = kNoUnit;
    std::int64_t step = -1;
    // The step at the playhead; when the last collective belongs to an earlier step the state
    // is not valid (the flows show nothing stale) and `step`/`kind` name that last collective.
    std::int64_t playheadStep = -1;
    bool earlierStep = false;
    Phase phase =
        Phase::None; // forward / backward context of an all-gather (from the next compute)
    int worldSize = 0;
    std::uint64_t bytes = 0;       // full buffer per rank
    std::uint64_t chunkBytes = 0;  // bytes / N: one shard
    std::uint64_t sentPerRank = 0; // ring model: (N−1)/N × bytes, 2(N−1)/N for all-reduce
    double progress = 0;           // 0…1 of the collective's time span at the playhead
    std::vector<int>
        chunkOwners; // chunk j of the full buffer → the group position owning it (−1: all)
    // Who talked to whom: the communicator groups this collective ran in (world ranks, each group
    // in rank order; one group of every rank without a mesh). Every group has groupSize members.
    std::vector<std::vector<int>> members;
    int groupSize = 0; // peers: T for a TP all-reduce, D (or HYBRID's group) for ZeRO's
    std::vector<FlowRank> ranks;
    std::size_t group = 0; // index into FlowIndex::groups()
    // A unit some rank computes while the collective is in flight (≠ unit): a prefetch.
    std::int32_t overlapUnit = kNoUnit;
    bool atPlayhead =
        true; // false: a group shown complete away from the playhead (nearest of its kind)
};

FlowState computeFlowState(const ReplayModel& model, const FlowIndex& index, std::uint64_t k);
// The state of group `group` (an index into index.groups()) at k; when k lies outside its span
// it is shown complete (`atPlayhead` false), so the picture still says what it moves.
FlowState computeFlowStateOf(const ReplayModel& model, const FlowIndex& index, std::size_t group,
                             std::uint64_t k);
// Convenience for tests: builds the index first.
FlowState computeFlowState(const ReplayModel& model, std::uint64_t k);

std::uint64_t ringBytesSent(CollectiveOp op, std::uint64_t bytes, int peers);

// The groups a collective of `peers` ranks ran in on a P × T × D mesh of worldSize ranks
// (plan/mesh.h): a TP all-reduce over the TP groups, a pipeline message over the pipeline
// groups, a collective of D ranks over the DP groups (every stage's), of all ranks over the
// world, of fewer (HYBRID) over the shard groups (all-gather, reduce-scatter) or the replica
// groups (all-reduce). Empty when peers fits none of them (a malformed recording).
std::vector<std::vector<int>> collectiveMembers(CollectiveOp op, int peers, int worldSize,
                                                int tensorParallel, int pipeParallel = 1);

// The compute span event k's rank was inside at k (None: between spans; k < eventCount()): a TP
// all-reduce's forward (partial activations) or backward (partial input gradients).
Phase computePhaseAt(const ReplayModel& model, std::uint64_t k);

// What the collective whose begin or end is event k moves (k < eventCount()).
CollectiveScope collectiveScopeAt(const ReplayModel& model, std::uint64_t k);

template <class Pred>
std::ptrdiff_t FlowIndex::nearestGroup(std::uint64_t k, std::int64_t playheadStep,
                                       Pred matches) const {
    const std::ptrdiff_t at = groupAt(k);
    std::ptrdiff_t before = -1;
    for (std::ptrdiff_t i = at; i >= 0; --i)
        if (matches(groups_[static_cast<std::size_t>(i)])) {
            before = i;
            break;
        }
    if (before >= 0) {
        const CollectiveGroup& g = groups_[static_cast<std::size_t>(before)];
        const bool open = std::any_of(g.endEvent.begin(), g.endEvent.end(),
                                      [k](std::uint64_t e) { return e == UINT64_MAX || e >= k; });
        if (g.step >= playheadStep || open) return before;
    }
    for (std::size_t i = static_cast<std::size_t>(at + 1); i < groups_.size(); ++i)
        if (matches(groups_[i])) return static_cast<std::ptrdiff_t>(i);
    return before;
}

} // namespace shardscope::replay
