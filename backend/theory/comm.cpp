// Communication volume per rank per step (estimate.h: commPerStep). What one call sends is
// plan::sentBytes (plan/collective.h: the ring algorithm of nccl-tests).
#include "plan/buckets.h"
#include "plan/collective.h"
#include "theory/estimate.h"
#include "theory/shard_plan.h"

#include <algorithm>

namespace shardscope::theory {

namespace {

std::uint64_t ceilDiv(std::uint64_t a, std::uint64_t b) {
    return a / b + (a % b != 0);
}

struct CommBuilder {
    CommPerStep out;

    void add(CollectiveOp k, std::uint64_t payloadPerCall, std::uint64_t participants, int calls,
             int repeats) {
        if (participants <= 1 || payloadPerCall == 0) return; // one rank: nothing to exchange
        const std::uint64_t payload = payloadPerCall * static_cast<std::uint64_t>(repeats);
        const std::uint64_t sent = plan::sentBytes(k, payload, participants);
        auto it = std::find_if(out.byKind.begin(), out.byKind.end(),
                               [k](const CommVolume& v) { return v.kind == k; });
        if (it == out.byKind.end()) {
            out.byKind.push_back({k, 0, 0, 0});
            it = out.byKind.end() - 1;
        }
        it->payloadBytes += payload;
        it->sentBytes += sent;
        it->calls += calls * repeats;
        out.totalSentBytes += sent;
    }
};

// Tensor parallelism (model/gpt.h): per micro-step every block all-reduces its two row-parallel
// outputs in forward and the input gradients of its two column-parallel linears in backward
// (4 per block); with activation checkpointing the recompute repeats the attention output's
// (the MLP output is not recomputed): +1 per block. Each is the fp32 activation B × S × d over
// the T ranks of the TP group, so one rank sends 2(T−1)/T of it.
void addTensorParallel(CommPerStep& out, const Scenario& s) {
    if (!s.shape || s.shape->tp <= 1) return;
    const auto perCall =
        static_cast<std::uint64_t>(s.activations.microBatch * s.shape->seqLen * s.shape->dModel) *
        sizeof(float);
    // Every block of the stage (plan::stageUnits: its units but the embedding and the head).
    std::uint64_t blocks = 0;
    for (const plan::StageUnits& c : s.stageChunks())
        blocks += static_cast<std::uint64_t>(std::min<std::int64_t>(c.end, s.shape->layers + 1) -
                                             std::max(c.first, 1));
    const std::uint64_t calls = blocks * (s.activations.checkpointing ? 5 : 4) *
                                static_cast<std::uint64_t>(s.knobs.gradAccumSteps);
    const std::uint64_t sent = plan::sentBytes(CollectiveOp::TpAllReduce, perCall,
                                               static_cast<std::uint64_t>(s.shape->tp));
    out.byKind.push_back(
        {CollectiveOp::TpAllReduce, perCall * calls, sent * calls, static_cast<int>(calls)});
    out.totalSentBytes += sent * calls;
}

// A pipeline stage's messages per step: each micro-batch's activation to the next stage and its
// gradient back to the previous one, [micro-batch × context × d] fp32 each (train/trainer.cpp),
// from each of its chunks (virtual stage k = c·P + s sends on unless it is the last, back unless
// it is the first).
void addPipeline(CommPerStep& out, const Scenario& s) {
    if (!s.shape || s.pipeStages <= 1) return;
    const auto perCall =
        static_cast<std::uint64_t>(s.activations.microBatch * s.shape->seqLen * s.shape->dModel) *
        sizeof(float);
    const int all = s.pipeStages * s.virtualStages;
    int neighbours = 0;
    for (int c = 0; c < s.virtualStages; ++c) {
        const int k = c * s.pipeStages + s.pipeStage;
        neighbours += (k > 0 ? 1 : 0) + (k + 1 < all ? 1 : 0);
    }
    const int calls = neighbours * s.knobs.gradAccumSteps;
    const std::uint64_t bytes = perCall * static_cast<std::uint64_t>(calls);
    out.byKind.push_back({CollectiveOp::PipeSend, bytes, bytes, calls});
    out.byKind.push_back({CollectiveOp::PipeRecv, bytes, 0, calls});
    out.totalSentBytes += bytes;
}

int bucketCalls(std::uint64_t bytes, std::uint64_t bucketBytes) {
    return static_cast<int>(std::max<std::uint64_t>(1, ceilDiv(bytes, bucketBytes)));
}

} // namespace

namespace {

// Bucketed collectives of a shaped scenario, cut exactly as strategy/sharded.cpp cuts them.
struct ShapedBuckets {
    int calls = 0;
    std::uint64_t payload = 0; // bytes, summed over calls
    std::uint64_t sent = 0;    // per call ring bytes, summed (integer rounding per call)
};

ShapedBuckets bucketed(const detail::ShardPlan& plan, CollectiveOp k, std::uint64_t bucketBytes,
                       std::uint64_t elementBytes, std::uint64_t participants, bool forward) {
    const bool allReduce = k == CollectiveOp::AllReduce;
    // The reductions are cut per pipeline chunk (a chunk's backward is one op), the all-gather
    // after the optimizer over every unit at once.
    int chunks = 1;
    for (const detail::PlanUnit& u : plan.units)
        chunks = std::max(chunks, u.chunk + 1);
    ShapedBuckets out;
    for (int c = 0; c < (forward ? 1 : chunks); ++c) {
        std::vector<plan::UnitRange> ranges;
        const std::size_t n = plan.units.size();
        for (std::size_t i = 0; i < n; ++i) {
            const std::size_t u = forward ? i : n - 1 - i;
            if (!forward && plan.units[u].chunk != c) continue;
            ranges.push_back(
                {static_cast<std::int32_t>(u),
                 allReduce ? plan.units[u].params : plan.units[u].padded / plan.shards});
        }
        for (const plan::Bucket& b :
             plan::planBuckets(ranges, plan::bucketCapacity(bucketBytes, elementBytes,
                                                            allReduce ? 1 : plan.shards))) {
            const std::uint64_t payload = b.count * elementBytes * (allReduce ? 1 : participants);
            out.calls += 1;
            out.payload += payload;
            out.sent += plan::sentBytes(k, payload, participants);
        }
    }
    return out;
}

} // namespace

// Which collectives each strategy calls per step (plan/policy.h): DDP and ZeRO-1 accumulate
// gradients locally and reduce once per step; ZeRO-2/3 and FSDP reduce every micro-step unless
// FSDP's no_sync keeps full gradients; ZeRO-3/FSDP gather params per micro-step and pass.
CommPerStep commPerStep(const Scenario& s) {
    const detail::ShardPlan plan = detail::makePlan(s);
    const std::uint64_t p = s.precision.paramBytes();
    const std::uint64_t g = s.precision.gradBytes();
    const auto n = static_cast<std::uint64_t>(s.ranks);
    const int accum = s.knobs.gradAccumSteps;
    const plan::Policy policy = detail::policyOf(s);
    // Gradient reductions per step: every micro-step, or once after local accumulation.
    const int reductions = policy.reduceEveryMicroStep ? accum : 1;
    const std::uint64_t gradBytes = plan.fullBytes(g);
    CommBuilder b;
    auto addBucketed = [&](CollectiveOp k, std::uint64_t bytes, std::uint64_t bucket,
                           std::uint64_t eb, int repeats, bool forward) {
        if (n <= 1) return;
        if (plan.bare) {
            b.add(k, bytes, n, bucketCalls(bytes, bucket), repeats);
            return;
        }
        const ShapedBuckets sb = bucketed(plan, k, bucket, eb, n, forward);
        auto it = std::find_if(b.out.byKind.begin(), b.out.byKind.end(),
                               [k](const CommVolume& v) { return v.kind == k; });
        if (it == b.out.byKind.end()) {
            b.out.byKind.push_back({k, 0, 0, 0});
            it = b.out.byKind.end() - 1;
        }
        const auto r = static_cast<std::uint64_t>(repeats);
        it->payloadBytes += sb.payload * r;
        it->sentBytes += sb.sent * r;
        it->calls += sb.calls * repeats;
        b.out.totalSentBytes += sb.sent * r;
    };
    // The strategy's families come from its policy (plan::policyFor), never from its name.
    if (!policy.shardOptimizer) { // DDP — ZeRO paper §7.1: all-reduce = reduce-scatter + all-gather
                                  // ≈ 2Ψ
        addBucketed(CollectiveOp::AllReduce, gradBytes, s.knobs.reduceBucketBytes, g, 1, false);
    } else if (!policy.shardParams) { // ZeRO-1/2 — §7.2.1: reduce-scatter grads + all-gather params
                                      // ≈ 2Ψ
        // ZeRO-2 keeps no full gradient, so it must reduce-scatter every micro-step.
        addBucketed(CollectiveOp::ReduceScatter, gradBytes, s.knobs.reduceBucketBytes, g,
                    reductions, false);
        addBucketed(CollectiveOp::AllGather, plan.fullBytes(p), s.knobs.allGatherBucketBytes, p, 1,
                    true);
    } else { // ZeRO-3 and the FSDP flavours: parameters sharded too
        // ZeRO paper §7.2.2: all-gather in forward and again in backward + reduce-scatter ≈ 3Ψ;
        // without resharding after forward (SHARD_GRAD_OP) one all-gather ≈ 2Ψ.
        const int passes = policy.reshardAfterForward ? 2 : 1;
        const auto units = static_cast<int>(plan.gatheredUnitCount());
        b.add(CollectiveOp::AllGather, plan.fullBytes(p, false, /*includePersistent=*/false),
              plan.shards, units, passes * accum);
        // Every unit's padded gradient is reduce-scattered (persistent units' too).
        b.add(CollectiveOp::ReduceScatter, plan.paddedTotal() * g, plan.shards,
              static_cast<int>(plan.units.size()), reductions);
        // ZeRO-3 param persistence: whole params on every rank, sharded optimizer — the updated
        // slices are all-gathered once per step.
        if (!plan.bare) {
            std::uint64_t persistentBytes = 0;
            int persistentUnits = 0;
            for (const auto& u : plan.units)
                if (u.persistent) {
                    persistentBytes += u.padded * p;
                    ++persistentUnits;
                }
            if (persistentUnits > 0)
                b.add(CollectiveOp::AllGather, persistentBytes, plan.shards, persistentUnits, 1);
        }
        // HYBRID_SHARD (FSDP paper §3.2.2): each shard is all-reduced across the N/G replicas.
        if (policy.hybrid) {
            if (plan.bare) {
                b.add(CollectiveOp::AllReduce, plan.shardBytes(g), n / plan.shards,
                      static_cast<int>(plan.units.size()), reductions);
            } else {
                // One all-reduce per unit: ring bytes rounded per call, as the communicator counts.
                const std::uint64_t replicas = n / plan.shards;
                for (const auto& u : plan.units)
                    b.add(CollectiveOp::AllReduce, u.padded / plan.shards * g, replicas, 1,
                          reductions);
            }
        }
    }
    const double psiBytes = static_cast<double>(p) * static_cast<double>(plan.params);
    b.out.psiEquivalents =
        psiBytes > 0 ? static_cast<double>(b.out.totalSentBytes) / psiBytes : 0.0;
    addTensorParallel(b.out, s);
    addPipeline(b.out, s);
    return std::move(b.out);
}

} // namespace shardscope::theory
