// Predicted peak device bytes per rank (estimate.h: predictPeak).
//
// With a shape this is a replay of one training step of this implementation, allocation by
// allocation, in the order the code makes them:
//   train/trainer.cpp      per unit: widen params (mixed), fp32 gradient workspace, hand the
//                          gradient to the strategy, free the workspaces;
//   strategy/sharded.cpp   unshard/prefetch/reshard, transient grad_full, reduce/gather buckets
//                          (plan/buckets.h cuts them), per-unit reduce-scatter, accumulation;
//   comm (MPI, --deterministic) alltoall staging for rank-order reductions;
//   model/gpt.cpp          activations per theory::activationBreakdown, freed in backward in the
//                          order blockBackward/headBackward free them, and their workspaces.
// predict/ runs that code itself on a CountingDevice (a dry run) and is what the Calculator and
// the strategy tests use; tests/unit/predict_test.cpp keeps this replay equal to it until the
// report and `estimate` take their peak from the dry run too.
#include <algorithm>
#include <string>

#include "theory/activations.h"
#include "plan/buckets.h"
#include "theory/estimate.h"
#include "theory/shard_plan.h"

namespace shardscope::theory {

namespace {

std::uint64_t unitsInFlight(const Scenario& s, const detail::ShardPlan& plan) {
    const auto inflight = static_cast<std::uint64_t>(detail::policyOf(s).gatherWindow);
    return std::min<std::uint64_t>(inflight, plan.gatheredUnitCount());
}

// The live ledger of one rank during the replay.
class Replay {
public:
    explicit Replay(const ByteTable& base) : live_(base), peakAt_(base), categoryPeaks_(base) {
        total_ = base.tier(Tier::Device);
        peak_ = total_;
        phase_ = "start of step";
    }
    void phase(std::string p) { current_ = std::move(p); }
    void alloc(Category c, std::uint64_t bytes) {
        if (bytes == 0) return;
        live_.at(c, Tier::Device) += bytes;
        total_ += bytes;
        categoryPeaks_.at(c, Tier::Device) = std::max(categoryPeaks_.at(c, Tier::Device), live_.at(c, Tier::Device));
        if (total_ > peak_) {
            peak_ = total_;
            peakAt_ = live_;
            phase_ = current_;
        }
    }
    void free(Category c, std::uint64_t bytes) {
        live_.at(c, Tier::Device) -= bytes;
        total_ -= bytes;
    }
    std::uint64_t peak() const { return peak_; }
    const ByteTable& peakAt() const { return peakAt_; }
    const ByteTable& categoryPeaks() const { return categoryPeaks_; }
    const std::string& peakPhase() const { return phase_; }

private:
    ByteTable live_, peakAt_, categoryPeaks_;
    std::uint64_t total_ = 0, peak_ = 0;
    std::string current_, phase_;
};

struct StepModel {
    StepModel(const Scenario& scenario, const detail::ShardPlan& shardPlan, Replay& replay)
        : s(scenario), plan(shardPlan), r(replay) {}
    const Scenario& s;
    const detail::ShardPlan& plan;
    Replay& r;
    std::uint64_t p = 2, g = 2;     // bytes per param / grad element
    bool mixed = true;              // fp32 compute on a 2-byte working copy: widen into workspace
    std::uint64_t ranks = 1, shards = 1, replicas = 1;
    bool shardParams = false, shardGrads = false, shardOptimizer = false, bucketed = false;
    bool reduceEveryMicro = false, reshardAfterForward = false, deterministic = false, shared = false, hybrid = false;
    std::uint64_t window = 1;
    std::vector<bool> gathered;
    // activations (bytes)
    std::uint64_t t = 0, td = 0, d = 0, seq = 0, vocab = 0, probs = 0, attnProbs = 0;
    std::vector<ActivationTensor> blockFull;
    bool checkpointing = false;
    std::vector<plan::Bucket> reducePlan, gatherPlan;
    std::size_t reduceCursor = 0, pieceCursor = 0;
    bool bucketLive = false;
    std::uint64_t bucketBytesLive = 0;

    std::size_t units() const { return plan.units.size(); }
    const detail::PlanUnit& unit(std::size_t u) const { return plan.units[u]; }
    std::uint64_t shardOf(std::size_t u) const { return unit(u).padded / shards; }
    std::string name(std::size_t u) const { return unit(u).name; }

    // --- collectives' scratch (comm/mpi_communicator.cpp, deterministic mode) ---
    void reduceScatterScratch(std::uint64_t count, std::uint64_t participants) {
        if (shared || !deterministic || participants <= 1) return;
        r.alloc(Category::CommBuffer, count * g * participants);
        r.free(Category::CommBuffer, count * g * participants);
    }
    void allReduceScratch(std::uint64_t count, std::uint64_t participants) {
        if (participants <= 1) return;
        const std::uint64_t chunk = (count + participants - 1) / participants;
        if (shared) { // the shared group's reduce-scatter target, then copies
            r.alloc(Category::CommBuffer, chunk * g);
            r.free(Category::CommBuffer, chunk * g);
            return;
        }
        if (!deterministic) return;
        r.alloc(Category::CommBuffer, chunk * participants * g);
        r.alloc(Category::CommBuffer, chunk * participants * g);
        r.free(Category::CommBuffer, 2 * chunk * participants * g);
    }

    // --- parameters ---
    void gather(std::size_t u) {
        if (unit(u).persistent || gathered[u]) return;
        r.alloc(Category::ParamFull, unit(u).padded * p);
        gathered[u] = true;
    }
    void reshard(std::size_t u) {
        if (unit(u).persistent || !gathered[u]) return;
        r.free(Category::ParamFull, unit(u).padded * p);
        gathered[u] = false;
    }

    // --- buckets (strategy/sharded.cpp packForReduce / flushReduce) ---
    void packForReduce(std::size_t u) {
        const bool allReduce = !shardOptimizer;
        const std::uint64_t slots = allReduce ? 1 : shards;
        while (reduceCursor < reducePlan.size()) {
            const plan::Bucket& b = reducePlan[reduceCursor];
            if (static_cast<std::size_t>(b.pieces[pieceCursor].unit) != u) return;
            if (!bucketLive) {
                bucketBytesLive = b.count * g * (slots + (allReduce ? 0 : 1));
                r.alloc(Category::CommBuffer, bucketBytesLive);
                bucketLive = true;
            }
            if (++pieceCursor == b.pieces.size()) {
                if (allReduce) allReduceScratch(b.count, ranks);
                else reduceScatterScratch(b.count, shards);
                r.free(Category::CommBuffer, bucketBytesLive);
                bucketLive = false;
                ++reduceCursor;
                pieceCursor = 0;
            }
        }
    }

    void forward(std::size_t u) {
        r.phase("forward of " + name(u));
        if (shardParams)
            for (std::size_t k = u; k < std::min(units(), u + window); ++k) gather(k);
        if (mixed) r.alloc(Category::Workspace, unit(u).params * 4);
        const std::size_t last = units() - 1;
        if (u == 0) {
            r.alloc(Category::Activation, t * 4); // token ids
            r.alloc(Category::Activation, td);    // output
        } else if (u == last) {
            r.alloc(Category::Activation, 2 * t * 4);
            r.alloc(Category::Activation, td);
            r.alloc(Category::Activation, probs);
            r.alloc(Category::Activation, t * 4);
            r.alloc(Category::Workspace, (t + 1) * 8); // cross-entropy row terms + mean (device/ops.h)
            r.free(Category::Workspace, (t + 1) * 8);
        } else {
            for (const auto& a : blockFull) r.alloc(Category::Activation, a.bytes);
            if (checkpointing) r.free(Category::Activation, totalBytes(blockFull) - td); // keeps block.out
        }
        if (mixed) r.free(Category::Workspace, unit(u).params * 4);
        if (shardParams && reshardAfterForward) reshard(u);
    }

    // model/gpt.cpp's backward of one unit: activation frees and workspaces, in code order.
    void modelBackward(std::size_t u) {
        const std::size_t last = units() - 1;
        auto act = [&](std::uint64_t b, bool alloc) { alloc ? r.alloc(Category::Activation, b) : r.free(Category::Activation, b); };
        auto ws = [&](std::uint64_t b, bool alloc) { alloc ? r.alloc(Category::Workspace, b) : r.free(Category::Workspace, b); };
        if (u == last) {
            act(t * 4, false);  // targets
            ws(td, true);       // dLnf
            act(probs, false);
            act(td, false);     // lnf_out
            ws(td, true);       // the gradient stream (lives until the embedding's backward)
            act(2 * t * 4, false);
            ws(td, false);      // dLnf
            act(td, false);     // input: the previous unit's output
        } else if (u == 0) {
            act(t * 4, false);  // token ids
            ws(td, false);      // the gradient stream
        } else {
            if (checkpointing) // recompute: the block's set without its output
                for (const auto& a : blockFull)
                    if (a.name != "block.out") act(a.bytes, true);
            ws(4 * td, true);   // dGelu
            act(4 * td, false); // gelu_out
            ws(4 * td, true);   // dFcPre
            act(4 * td, false); // fc_pre
            ws(4 * td, false);  // dGelu
            ws(td, true);       // dLn2
            act(td, false);     // ln2_out
            ws(4 * td, false);  // dFcPre
            act(td, false);     // resid1
            act(2 * t * 4, false); // ln2_stats
            ws(td, false);      // dLn2
            ws(td, true);       // dAttn
            act(td, false);     // attn_out
            ws(3 * td, true);   // dQkv
            ws(seq * seq * 4, true); // attention scratch
            act(attnProbs, false);
            act(3 * td, false); // qkv
            ws(seq * seq * 4, false);
            ws(td, false);      // dAttn
            ws(td, true);       // dLn1
            act(td, false);     // ln1_out
            ws(3 * td, false);  // dQkv
            act(2 * t * 4, false); // ln1_stats
            ws(td, false);      // dLn1
            act(td, false);     // input: the previous unit's output
        }
    }

    void backward(std::size_t u, int micro, int micros) {
        r.phase("backward of " + name(u));
        const bool first = micro == 0, lastMicro = micro + 1 == micros;
        if (shardParams)
            for (std::size_t k = u + 1; k-- > 0 && k + window > u;) gather(k);
        const std::uint64_t n = unit(u).params;
        if (mixed) r.alloc(Category::Workspace, n * 4);
        r.alloc(Category::Workspace, n * 4); // fp32 gradient
        modelBackward(u);
        if (mixed) r.free(Category::Workspace, n * 4);
        // storeGradients: a transient (or no_sync-kept) full gradient
        const bool transientGrad = shardGrads && (reduceEveryMicro || first);
        if (transientGrad) r.alloc(Category::GradFull, unit(u).padded * g);
        r.free(Category::Workspace, n * 4);
        r.phase("gradient reduction of " + name(u));
        if (shardParams) reshard(u);
        if (bucketed) {
            if (shardGrads) {
                if (!reducePlan.empty()) packForReduce(u);
                r.free(Category::GradFull, unit(u).padded * g);
            } else if (!shardOptimizer && lastMicro && !reducePlan.empty()) {
                packForReduce(u);
            }
            return;
        }
        if (reduceEveryMicro || lastMicro) {
            const bool accumulate = reduceEveryMicro && !first;
            const std::uint64_t shard = shardOf(u);
            if (accumulate) r.alloc(Category::CommBuffer, shard * g);
            reduceScatterScratch(shard, shards);
            if (hybrid) allReduceScratch(shard, replicas);
            if (accumulate) r.free(Category::CommBuffer, shard * g);
            r.free(Category::GradFull, unit(u).padded * g);
        }
    }

    void endBackward(int micro, int micros) {
        if (bucketed && shardOptimizer && !shardGrads && micro + 1 == micros && !reducePlan.empty()) {
            r.phase("gradient reduce-scatter");
            for (std::size_t u = units(); u-- > 0;) packForReduce(u);
        }
        reduceCursor = pieceCursor = 0;
    }

    void afterOptimizer() {
        r.phase("parameter all-gather");
        if (shardOptimizer && !shardParams && shards > 1) {
            for (const plan::Bucket& b : gatherPlan) {
                r.alloc(Category::CommBuffer, b.count * p * shards);
                r.free(Category::CommBuffer, b.count * p * shards);
            }
        }
        if (shardParams)
            for (const auto& u : plan.units)
                if (u.persistent) {
                    r.alloc(Category::CommBuffer, u.padded * p);
                    r.free(Category::CommBuffer, u.padded * p);
                }
    }

    void run() {
        const int micros = s.knobs.gradAccumSteps;
        for (int m = 0; m < micros; ++m) {
            for (std::size_t u = 0; u < units(); ++u) forward(u);
            for (std::size_t u = units(); u-- > 0;) backward(u, m, micros);
            endBackward(m, micros);
        }
        afterOptimizer();
    }
};

} // namespace

PeakPrediction predictPeak(const Scenario& s) {
    const ModelStates states = modelStates(s);
    const detail::ShardPlan plan = detail::makePlan(s);
    const plan::Policy policy = detail::policyOf(s);
    const std::uint64_t p = s.precision.paramBytes();
    const std::uint64_t g = s.precision.gradBytes();
    PeakPrediction out;
    out.modelStates = states.perRank;
    out.paddingBytes = states.paddingBytes;

    if (!s.shape) {
        // ZeRO paper view: states + one gathered unit (+ prefetch) + a gradient + a bucket.
        out.notes.emplace_back("no model shape: activations and workspaces are not predicted and the whole "
                               "model counts as one unit");
        if (policy.reshardAfterForward) out.gatheredBytes = plan.largestGatheredUnit() * p * unitsInFlight(s, plan);
        if (policy.shardGrads) {
            const bool keepAll = policy.keepFullGrads;
            std::uint64_t largest = 0;
            for (const auto& u : plan.units) largest = std::max(largest, u.padded);
            out.gradFullBytes = keepAll ? plan.fullBytes(g) : largest * g;
        }
        if (!policy.shardParams) out.bucketBytes = std::min(s.knobs.reduceBucketBytes, plan.fullBytes(g));
        out.peakBytes = states.perRank.tier(Tier::Device) + out.gatheredBytes + out.gradFullBytes + out.bucketBytes;
        out.atPeak = states.perRank;
        out.atPeak.at(Category::ParamFull, Tier::Device) += out.gatheredBytes;
        out.atPeak.at(Category::GradFull, Tier::Device) += out.gradFullBytes;
        out.atPeak.at(Category::CommBuffer, Tier::Device) += out.bucketBytes;
        out.categoryPeaks = out.atPeak;
        out.peakPhase = "backward";
        return out;
    }

    // Base: the persistent states. SHARD_GRAD_OP's / reshard_after_forward=false's full params
    // are a model state in modelStates() (held from forward to backward) but are gathered unit
    // by unit in the replay, so they start out of the base.
    ByteTable base;
    for (Category c : kAllCategories) base.at(c, Tier::Device) = states.perRank.at(c, Tier::Device);
    if (policy.keepsParamsGathered) base.at(Category::ParamFull, Tier::Device) -= plan.fullBytes(p);
    Replay replay(base);
    StepModel m(s, plan, replay);
    m.p = p;
    m.g = g;
    m.mixed = p == 2;
    m.ranks = static_cast<std::uint64_t>(s.ranks);
    m.shards = plan.shards;
    m.replicas = m.ranks / m.shards;
    m.shardParams = policy.shardParams;
    m.shardGrads = policy.shardGrads;
    m.shardOptimizer = policy.shardOptimizer;
    m.bucketed = policy.bucketedReduce;
    m.reduceEveryMicro = policy.reduceEveryMicroStep;
    m.reshardAfterForward = policy.reshardAfterForward;
    m.hybrid = policy.hybrid;
    m.deterministic = s.knobs.deterministicReductions;
    m.shared = s.knobs.sharedDeviceCollectives;
    m.window = static_cast<std::uint64_t>(policy.gatherWindow);
    m.gathered.assign(plan.units.size(), false);
    const GptShape& shape = *s.shape;
    const ActivationBreakdown acts = activationBreakdown(shape, s.activations);
    m.t = static_cast<std::uint64_t>(s.activations.microBatch * shape.seqLen);
    m.td = m.t * static_cast<std::uint64_t>(shape.dModel) * 4;
    m.seq = static_cast<std::uint64_t>(shape.seqLen);
    m.probs = m.t * static_cast<std::uint64_t>(shape.vocab) * 4;
    m.attnProbs = static_cast<std::uint64_t>(s.activations.microBatch * shape.heads * shape.seqLen * shape.seqLen) * 4;
    m.blockFull = acts.blockFull;
    m.checkpointing = s.activations.checkpointing;
    if (m.bucketed && m.ranks > 1) {
        std::vector<plan::UnitRange> backward, forward;
        for (std::size_t u = plan.units.size(); u-- > 0;)
            backward.push_back({static_cast<std::int32_t>(u), m.shardOptimizer ? m.shardOf(u) : plan.units[u].params});
        m.reducePlan = plan::planBuckets(backward, plan::bucketCapacity(s.knobs.reduceBucketBytes, g, m.shardOptimizer ? m.shards : 1));
        if (m.shardOptimizer) {
            for (std::size_t u = 0; u < plan.units.size(); ++u) forward.push_back({static_cast<std::int32_t>(u), m.shardOf(u)});
            m.gatherPlan = plan::planBuckets(forward, plan::bucketCapacity(s.knobs.allGatherBucketBytes, p, m.shards));
        }
    }
    m.run();

    out.peakBytes = replay.peak();
    out.atPeak = replay.peakAt();
    out.categoryPeaks = replay.categoryPeaks();
    out.peakPhase = replay.peakPhase();
    out.activationBytes = acts.peakBytes;
    out.gatheredBytes = out.categoryPeaks.category(Category::ParamFull) - base.category(Category::ParamFull);
    out.gradFullBytes = out.categoryPeaks.category(Category::GradFull) - base.category(Category::GradFull);
    out.bucketBytes = out.categoryPeaks.category(Category::CommBuffer);
    out.workspaceBytes = out.categoryPeaks.category(Category::Workspace);
    if (m.reshardAfterForward) {
        const std::uint64_t inflight = unitsInFlight(s, plan);
        out.notes.push_back("gathered params at most " + std::to_string(out.gatheredBytes) + " B ≤ largest unit × (1 + prefetch) = " +
                            std::to_string(plan.largestGatheredUnit() * p * inflight) + " B");
    }
    out.notes.push_back("replay of this implementation's allocations: the peak is at the " + out.peakPhase);
    if (!m.deterministic && !m.shared && s.ranks > 1)
        out.notes.emplace_back("MPI's internal reduction buffers are outside the ledger and not predicted");
    out.notes.emplace_back("allocator rounding and fragmentation are not counted (the ledger counts requested bytes)");
    return out;
}

} // namespace shardscope::theory
