#include "replay/flow_state.h"

#include "plan/collective.h"
#include "plan/mesh.h"
#include "plan/pipeline.h"

#include <algorithm>

namespace shardscope::replay {
namespace {
// How far to look for the compute that gives a collective its phase (forward or backward);
// in a real run it is a handful of events away, the cap only bounds a malformed stream.
constexpr std::uint64_t kPhaseLookahead = 200000;
} // namespace

std::uint64_t ringBytesSent(CollectiveOp op, std::uint64_t bytes, int peers) {
    return plan::sentBytes(op, bytes, static_cast<std::uint64_t>(std::max(peers, 1)));
}

std::vector<std::vector<int>> collectiveMembers(CollectiveOp op, int peers, int worldSize,
                                                int tensorParallel, int pipeParallel) {
    const int n = worldSize, t = std::max(tensorParallel, 1), p = std::max(pipeParallel, 1);
    if (n < 1 || peers < 1 || peers > n || n % (t * p) != 0) return {};
    const int d = n / (t * p);
    if (op == CollectiveOp::TpAllReduce)
        return peers == t ? plan::groupsBy(n, [t](int r) { return plan::tensorColor(r, t); })
                          : std::vector<std::vector<int>>{};
    if (op == CollectiveOp::PipeSend || op == CollectiveOp::PipeRecv)
        return peers == p ? plan::groupsBy(n, [t, d](int r) { return plan::pipeColor(r, t, d); })
                          : std::vector<std::vector<int>>{};
    if (peers == n) return {plan::groupsBy(n, [](int) { return 0; })};
    if (peers == d) return plan::groupsBy(n, [t, d](int r) { return plan::dataColor(r, t, d); });
    if (d % peers != 0) return {};
    if (op ==
        CollectiveOp::AllReduce) { // HYBRID's replica groups: D / G ranks, one per shard group
        const int g = d / peers;
        return plan::groupsBy(n, [t, d, g](int r) { return plan::replicaColor(r, t, d, g); });
    }
    return plan::groupsBy(n, [t, d, peers](int r) { return plan::shardColor(r, t, d, peers); });
}

void FlowIndex::reset(int worldSize) {
    groups_.clear();
    worldSize_ = worldSize;
    byKey_.clear();
    groupOf_.clear();
    ordinal_.assign(static_cast<std::size_t>(std::max(worldSize, 0)), {});
    open_.assign(static_cast<std::size_t>(std::max(worldSize, 0)), {});
    steps_ = 0;
}

FlowIndex::Key FlowIndex::keyOf(const Event& e, const ReplayModel& model) {
    const auto& info = model.info();
    const int n = worldSize_, t = info ? std::max(info->tensorParallel, 1) : 1;
    const int p = info ? std::max(info->pipeParallel, 1) : 1;
    Key key{e.collective, e.unit, e.peers, -1, -1};
    if (e.collective == CollectiveOp::PipeSend || e.collective == CollectiveOp::PipeRecv) {
        // The boundary's unit is the earlier stage's last: a send of it leaves that stage
        // forward (an activation), a receive of it arrives there backward (its gradient).
        key.op = CollectiveOp::PipeSend;
        const auto layers = info ? static_cast<int>(info->units.size()) - 2 : 0;
        if (p <= 1 || n % p != 0 || layers < p) return key;
        const int td = n / p, stage = e.rank / td;
        if (stage >= p) return key;
        if (layers < p * std::max(info->virtualStages, 1)) return key;
        const bool send = e.collective == CollectiveOp::PipeSend;
        bool outgoingBoundary = false; // a chunk's output (the last rank's goes to rank 0)
        for (const auto& [first, end] : info->stageChunks(stage))
            outgoingBoundary = outgoingBoundary || e.unit == end - 1;
        const int other = (e.rank + (outgoingBoundary ? td : n - td)) % n;
        key.group = send ? e.rank : other;
        key.receiver = send ? other : e.rank;
        key.peers = 2;
        return key;
    }
    // The index of the rank's group among the groups of this kind and size.
    if (groupMesh_ != std::pair{t, p}) {
        groupOf_.clear();
        groupMesh_ = {t, p};
    }
    auto [at, fresh] = groupOf_.try_emplace({e.collective, e.peers});
    if (fresh) {
        at->second.assign(static_cast<std::size_t>(std::max(n, 0)), -1);
        const auto groups = collectiveMembers(e.collective, e.peers, n, t, p);
        for (std::size_t g = 0; g < groups.size(); ++g)
            for (const int r : groups[g])
                if (r >= 0 && r < n) at->second[static_cast<std::size_t>(r)] = static_cast<int>(g);
    }
    if (e.rank >= 0 && e.rank < n) key.group = at->second[static_cast<std::size_t>(e.rank)];
    return key;
}

void FlowIndex::update(const ReplayModel& model) {
    if (worldSize_ != model.worldSize() || model.stepCount() < steps_) reset(model.worldSize());
    const auto n = static_cast<std::size_t>(worldSize_);
    for (; steps_ < model.stepCount(); ++steps_) {
        const StepData& step = model.step(steps_);
        for (std::size_t i = 0; i < step.events.size(); ++i) {
            const Event& e = step.events[i];
            if (e.rank < 0 || static_cast<std::size_t>(e.rank) >= n) continue;
            const auto r = static_cast<std::size_t>(e.rank);
            const std::uint64_t at = step.firstEvent + i;
            if (e.kind == EventKind::CollectiveBegin) {
                const Key key = keyOf(e, model);
                std::vector<std::size_t>& ofKey = byKey_[key];
                const std::size_t k = ordinal_[r][key]++;
                if (k >= ofKey.size()) {
                    ofKey.push_back(groups_.size());
                    CollectiveGroup grp;
                    grp.op = e.collective;
                    grp.unit = e.unit;
                    grp.bytes = e.bytes;
                    grp.peers = e.peers > 0 ? e.peers : worldSize_;
                    grp.step = e.step;
                    grp.firstBegin = at;
                    grp.beginNs = step.replayNs(i);
                    grp.beginEvent.assign(n, UINT64_MAX);
                    grp.endEvent.assign(n, UINT64_MAX);
                    if (grp.op == CollectiveOp::PipeRecv) grp.op = CollectiveOp::PipeSend;
                    grp.member = key.group;
                    if (grp.op == CollectiveOp::PipeSend && key.receiver >= 0) {
                        grp.sender = key.group; // a message joins two ranks
                        grp.receiver = key.receiver;
                        grp.peers = 2;
                    }
                    groups_.push_back(std::move(grp));
                }
                const std::size_t g = ofKey[k];
                groups_[g].beginEvent[r] = at;
                open_[r].open(*spanKeyOf(e), g);
            } else if (e.kind == EventKind::CollectiveEnd) {
                const auto g = open_[r].close(*spanKeyOf(e));
                if (!g) continue;
                CollectiveGroup& grp = groups_[*g];
                grp.endEvent[r] = at;
                grp.lastEnd = std::max(grp.lastEnd, at);
                grp.endNs = std::max(grp.endNs, step.replayNs(i));
            }
        }
    }
}

std::ptrdiff_t FlowIndex::groupAt(std::uint64_t k) const {
    const auto it = std::lower_bound(
        groups_.begin(), groups_.end(), k,
        [](const CollectiveGroup& g, std::uint64_t v) { return g.firstBegin < v; });
    return (it - groups_.begin()) - 1;
}

namespace {

// The compute span event k's rank was inside at k (None: between spans).
Phase enclosingPhase(const ReplayModel& m, std::uint64_t k) {
    const Event& at = m.event(k);
    for (std::uint64_t d = 1; d <= kPhaseLookahead && d <= k; ++d) {
        const Event& e = m.event(k - d);
        if (e.rank != at.rank) continue;
        if (e.kind == EventKind::ComputeEnd || e.kind == EventKind::StepBegin) return Phase::None;
        if (e.kind == EventKind::ComputeBegin) return e.phase;
    }
    return Phase::None;
}

// The phase of the compute that belongs to this collective: the unit's next compute for an
// all-gather (it unshards for that), its previous one for a reduction (it reduces its output).
// A bucket's gradients come from backward; its updated parameters and the norm from the optimizer.
Phase phaseOf(const ReplayModel& m, const CollectiveGroup& g, CollectiveScope scope) {
    if (scope == CollectiveScope::GradNorm) return Phase::Optimizer;
    if (scope == CollectiveScope::TensorParallel) { // inside the compute it completes
        const Phase p = enclosingPhase(m, g.firstBegin);
        return p == Phase::Recompute ? Phase::Forward : p;
    }
    if (scope == CollectiveScope::Bucket)
        return g.op == CollectiveOp::AllGather ? Phase::Optimizer : Phase::Backward;
    const bool forwardLook = g.op == CollectiveOp::AllGather;
    const std::uint64_t n = m.eventCount();
    for (std::uint64_t d = 1; d <= kPhaseLookahead; ++d) {
        if (forwardLook ? g.firstBegin + d >= n : d > g.firstBegin) break;
        const Event& e = m.event(forwardLook ? g.firstBegin + d : g.firstBegin - d);
        if (e.kind == EventKind::ComputeBegin && e.unit == g.unit) // W: a split backward's half
            return e.phase == Phase::Recompute || e.phase == Phase::WeightGrad ? Phase::Backward
                                                                               : e.phase;
    }
    return Phase::None;
}

// A bucket or the norm has no unshard/reshard cycle: before, inside, after its collective.
UnitCycle bucketCycleOf(CollectiveOp op, CollectiveScope scope, bool inColl, bool done) {
    if (scope == CollectiveScope::TensorParallel)
        return inColl ? UnitCycle::TpReducing : done ? UnitCycle::FullSum : UnitCycle::PartialSum;
    if (scope == CollectiveScope::GradNorm)
        return inColl ? UnitCycle::AllReducing : done ? UnitCycle::NormSummed : UnitCycle::NormPart;
    switch (op) {
    case CollectiveOp::AllGather:
        return inColl ? UnitCycle::GatheringUpdates
               : done ? UnitCycle::ParamsUpdated
                      : UnitCycle::SliceUpdated;
    case CollectiveOp::ReduceScatter:
        return inColl ? UnitCycle::ReduceScattering
               : done ? UnitCycle::Reduced
                      : UnitCycle::GradientsReady;
    default:
        return inColl ? UnitCycle::AllReducing
               : done ? UnitCycle::AllReduced
                      : UnitCycle::GradientsReady;
    }
}

UnitCycle cycleOf(CollectiveOp op, bool inColl, bool done, bool computing, bool gathered,
                  bool freed) {
    if (op == CollectiveOp::AllGather) {
        if (inColl) return UnitCycle::Gathering;
        // Before its all-gather a rank may already hold the empty receive buffer (param_full is
        // allocated first): that is not "gathered" yet.
        if (!done) return freed ? UnitCycle::Freed : UnitCycle::ShardOnly;
    } else if (op == CollectiveOp::ReduceScatter) {
        if (inColl) return UnitCycle::ReduceScattering;
        if (done) return UnitCycle::Reduced;
    } else if (op == CollectiveOp::AllReduce) {
        if (inColl) return UnitCycle::AllReducing;
        if (done) return UnitCycle::AllReduced;
    }
    if (computing) return UnitCycle::Computing;
    if (gathered) return UnitCycle::Gathered;
    if (freed) return UnitCycle::Freed;
    return UnitCycle::ShardOnly;
}

} // namespace

Phase computePhaseAt(const ReplayModel& model, std::uint64_t k) {
    return enclosingPhase(model, k);
}

CollectiveScope collectiveScopeAt(const ReplayModel& m, std::uint64_t k) {
    const Event& e = m.event(k);
    if (e.collective == CollectiveOp::TpAllReduce) return CollectiveScope::TensorParallel;
    if (e.unit >= 0) return CollectiveScope::Unit;
    if (e.collective == CollectiveOp::AllReduce && enclosingPhase(m, k) == Phase::Optimizer)
        return CollectiveScope::GradNorm;
    return CollectiveScope::Bucket;
}

namespace {

// The state of group gi at k (k within the recording), the header fields already set.
void fillGroupState(const ReplayModel& model, const FlowIndex& index, std::size_t gi,
                    std::uint64_t k, FlowState& s) {
    const CollectiveGroup& g = index.groups()[gi];
    const int n = std::max(g.peers, 1);
    s.valid = true;
    s.groupSize = n;
    // A pipeline message joins its sender and receiver and moves its bytes whole.
    s.members = g.sender >= 0 ? std::vector<std::vector<int>>{{g.sender, g.receiver}}
                              : collectiveMembers(g.op, n, s.worldSize,
                                                  model.info() ? model.info()->tensorParallel : 1,
                                                  model.info() ? model.info()->pipeParallel : 1);
    // The groups of one stage run a collective side by side (TP groups, DP groups of a mesh);
    // another stage runs its own sequence: draw only the stage's groups.
    const int stages = model.info() ? std::max(model.info()->pipeParallel, 1) : 1;
    if (stages > 1 && g.sender < 0 && g.member >= 0 &&
        static_cast<std::size_t>(g.member) < s.members.size() && s.worldSize % stages == 0) {
        const int td = s.worldSize / stages;
        const int stage = s.members[static_cast<std::size_t>(g.member)].front() / td;
        std::erase_if(s.members, [&](const std::vector<int>& m) {
            return m.empty() || m.front() / td != stage;
        });
    }
    s.scope = collectiveScopeAt(model, g.firstBegin);
    s.bytes = g.bytes;
    s.chunkBytes = g.sender >= 0 ? g.bytes : g.bytes / static_cast<std::uint64_t>(n);
    s.sentPerRank = ringBytesSent(g.op, g.bytes, n);
    s.phase = phaseOf(model, g, s.scope);
    const bool sharded = g.op == CollectiveOp::AllGather || g.op == CollectiveOp::ReduceScatter;
    s.chunkOwners.resize(static_cast<std::size_t>(n));
    for (int j = 0; j < n; ++j)
        s.chunkOwners[static_cast<std::size_t>(j)] = sharded ? j : -1;

    const double now = static_cast<double>(model.replayNsAt(k));
    const bool finished = g.lastEnd > 0 && g.lastEnd < k &&
                          std::none_of(g.endEvent.begin(), g.endEvent.end(),
                                       [](std::uint64_t e) { return e == UINT64_MAX; });
    if (finished) {
        s.progress = 1;
    } else if (g.endNs > g.beginNs) {
        s.progress = std::clamp((now - static_cast<double>(g.beginNs)) /
                                    static_cast<double>(g.endNs - g.beginNs),
                                0.0, 1.0);
    }

    // Resharded: the rank's latest param_full event for this unit in this step is a free (the
    // forward's reshard, or the backward's before its reduce-scatter). Scanning back within
    // the step stops as soon as every rank is resolved, usually after a few events.
    const auto ranks = static_cast<std::size_t>(s.worldSize);
    std::vector<bool> freed(ranks, false), resolved(ranks, false);
    if (g.unit >= 0 && k > 0) {
        const std::uint64_t stepStart = model.step(model.stepIndexOf(k - 1)).firstEvent;
        std::size_t open = ranks;
        for (std::uint64_t i = k; i-- > stepStart && open > 0;) {
            const Event& e = model.event(i);
            const auto r = static_cast<std::size_t>(e.rank);
            if (r >= ranks || resolved[r] || e.category != Category::ParamFull || e.unit != g.unit)
                continue;
            if (e.kind != EventKind::Alloc && e.kind != EventKind::Free) continue;
            freed[r] = e.kind == EventKind::Free;
            resolved[r] = true;
            --open;
        }
    }
    const LedgerState state = model.stateAt(k);
    s.ranks.resize(ranks);
    for (std::size_t r = 0; r < ranks && r < state.size(); ++r) {
        FlowRank& fr = s.ranks[r];
        const RankState& rs = state[r];
        const std::uint64_t b = r < g.beginEvent.size() ? g.beginEvent[r] : UINT64_MAX;
        const std::uint64_t e = r < g.endEvent.size() ? g.endEvent[r] : UINT64_MAX;
        fr.inCollective = b < k && (e == UINT64_MAX || e >= k);
        fr.collectiveDone = e != UINT64_MAX && e < k;
        s.active = s.active || fr.inCollective;
        const bool computing = g.unit >= 0 && rs.computeUnit == g.unit;
        fr.phase = computing ? rs.phase : Phase::None;
        if (fr.collectiveDone) {
            fr.progress = 1;
        } else if (fr.inCollective) {
            // Its own begin and end on the replay clock (replayNsAt(i + 1) = time of event i).
            const double t0 = static_cast<double>(model.replayNsAt(b + 1));
            const double t1 = e == UINT64_MAX ? static_cast<double>(g.endNs)
                                              : static_cast<double>(model.replayNsAt(e + 1));
            fr.progress = t1 > t0 ? std::clamp((now - t0) / (t1 - t0), 0.0, 1.0) : 0.0;
        }
        if (s.scope != CollectiveScope::Unit)
            fr.cycle = bucketCycleOf(g.op, s.scope, fr.inCollective, fr.collectiveDone);
        else
            fr.cycle = cycleOf(g.op, fr.inCollective, fr.collectiveDone, computing,
                               rs.isGathered(g.unit), freed[r]);
    }
    // A prefetch: some unit computes while the collective is still in flight on some rank.
    if (s.active)
        for (std::size_t r = 0; r < ranks && r < state.size() && s.overlapUnit == kNoUnit; ++r)
            if (state[r].computeUnit >= 0 && state[r].computeUnit != g.unit)
                s.overlapUnit = state[r].computeUnit;
}

void setHeader(const ReplayModel& model, const CollectiveGroup& g, std::size_t gi, std::uint64_t k,
               FlowState& s) {
    s.worldSize = model.worldSize();
    s.group = gi;
    s.kind = g.op;
    s.unit = g.unit;
    s.step = g.step;
    s.playheadStep = k > 0 ? model.step(model.stepIndexOf(k - 1)).step : g.step;
}

} // namespace

FlowState computeFlowState(const ReplayModel& model, const FlowIndex& index, std::uint64_t k) {
    FlowState s;
    s.worldSize = model.worldSize();
    k = std::min(k, model.eventCount());
    const std::ptrdiff_t gi = index.groupAt(k);
    if (gi < 0) return s;
    const CollectiveGroup& g = index.groups()[static_cast<std::size_t>(gi)];
    setHeader(model, g, static_cast<std::size_t>(gi), k, s);
    const bool finishedEarlier =
        g.step < s.playheadStep &&
        std::none_of(g.endEvent.begin(), g.endEvent.end(),
                     [k](std::uint64_t e) { return e == UINT64_MAX || e >= k; });
    if (finishedEarlier) { // nothing of this step has been communicated yet
        s.earlierStep = true;
        return s;
    }
    fillGroupState(model, index, static_cast<std::size_t>(gi), k, s);
    return s;
}

FlowState computeFlowStateOf(const ReplayModel& model, const FlowIndex& index, std::size_t group,
                             std::uint64_t k) {
    FlowState s;
    s.worldSize = model.worldSize();
    if (group >= index.groups().size()) return s;
    const CollectiveGroup& g = index.groups()[group];
    k = std::min(k, model.eventCount());
    // In its span (begun before k, some rank not yet past its end): at the playhead; else complete.
    const bool begun = g.firstBegin < k;
    const bool open = std::any_of(g.endEvent.begin(), g.endEvent.end(),
                                  [k](std::uint64_t e) { return e == UINT64_MAX || e >= k; });
    const std::uint64_t end =
        g.lastEnd > 0 ? g.lastEnd + 1 : model.eventCount(); // never ended: the recording's end
    const std::uint64_t at = begun && open ? k : std::min(end, model.eventCount());
    setHeader(model, g, group, at, s);
    s.atPlayhead = begun && open;
    if (!s.atPlayhead) s.playheadStep = k > 0 ? model.step(model.stepIndexOf(k - 1)).step : g.step;
    fillGroupState(model, index, group, at, s);
    return s;
}

FlowState computeFlowState(const ReplayModel& model, std::uint64_t k) {
    FlowIndex index;
    index.reset(model.worldSize());
    index.update(model);
    return computeFlowState(model, index, k);
}

} // namespace shardscope::replay
