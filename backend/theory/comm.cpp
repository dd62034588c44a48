// Communication volume per rank per step (estimate.h: commPerStep, busBandwidthFactor).
// Ring algorithms as in nccl-tests (PERFORMANCE.md): a rank sends (P−1)/P of the buffer in an
// all-gather or reduce-scatter, 2(P−1)/P in an all-reduce.
#include <algorithm>

#include "theory/buckets.h"
#include "theory/estimate.h"
#include "theory/shard_plan.h"

namespace shardscope::theory {

std::string_view collectiveName(CollectiveKind k) {
    switch (k) {
    case CollectiveKind::AllGather: return "all_gather";
    case CollectiveKind::ReduceScatter: return "reduce_scatter";
    case CollectiveKind::AllReduce: return "all_reduce";
    case CollectiveKind::Broadcast: return "broadcast";
    }
    return "unknown";
}

// nccl-tests PERFORMANCE.md: busbw = algbw × factor.
double busBandwidthFactor(CollectiveKind k, int ranks) {
    if (ranks <= 1) return k == CollectiveKind::Broadcast ? 1.0 : 0.0;
    const double n = ranks;
    switch (k) {
    case CollectiveKind::AllGather:
    case CollectiveKind::ReduceScatter: return (n - 1.0) / n;
    case CollectiveKind::AllReduce: return 2.0 * (n - 1.0) / n;
    case CollectiveKind::Broadcast: return 1.0;
    }
    return 0.0;
}

namespace {

// Bytes one rank sends for `payload` bytes over P participants (ring), rounded down.
std::uint64_t ringSentBytes(CollectiveKind k, std::uint64_t payload, std::uint64_t participants) {
    if (participants <= 1) return 0;
    const detail::Uint128 factorNum = (k == CollectiveKind::AllReduce ? 2 : 1) * (participants - 1);
    if (k == CollectiveKind::Broadcast) return payload;
    return static_cast<std::uint64_t>(payload * factorNum / participants);
}

std::uint64_t ceilDiv(std::uint64_t a, std::uint64_t b) { return a / b + (a % b != 0); }

struct CommBuilder {
    CommPerStep out;

    void add(CollectiveKind k, std::uint64_t payloadPerCall, std::uint64_t participants, int calls,
             int repeats) {
        if (participants <= 1 || payloadPerCall == 0) return; // one rank: nothing to exchange
        const std::uint64_t payload = payloadPerCall * static_cast<std::uint64_t>(repeats);
        const std::uint64_t sent = ringSentBytes(k, payload, participants);
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

ShapedBuckets bucketed(const detail::ShardPlan& plan, CollectiveKind k, std::uint64_t bucketBytes,
                       std::uint64_t elementBytes, std::uint64_t participants, bool forward) {
    const bool allReduce = k == CollectiveKind::AllReduce;
    std::vector<UnitRange> ranges;
    const std::size_t n = plan.units.size();
    for (std::size_t i = 0; i < n; ++i) {
        const std::size_t u = forward ? i : n - 1 - i;
        ranges.push_back({static_cast<std::int32_t>(u), allReduce ? plan.units[u].params : plan.units[u].padded / plan.shards});
    }
    ShapedBuckets out;
    for (const Bucket& b : planBuckets(ranges, bucketCapacity(bucketBytes, elementBytes, allReduce ? 1 : plan.shards))) {
        const std::uint64_t payload = b.count * elementBytes * (allReduce ? 1 : participants);
        out.calls += 1;
        out.payload += payload;
        out.sent += ringSentBytes(k, payload, participants);
    }
    return out;
}

} // namespace

// Which collectives each strategy calls per step (strategy/policy.h): DDP and ZeRO-1 accumulate
// gradients locally and reduce once per step; ZeRO-2/3 and FSDP reduce every micro-step unless
// FSDP's no_sync keeps full gradients; ZeRO-3/FSDP gather params per micro-step and pass.
CommPerStep commPerStep(const Scenario& s) {
    const detail::ShardPlan plan = detail::makePlan(s);
    const std::uint64_t p = s.precision.paramBytes();
    const std::uint64_t g = s.precision.gradBytes();
    const auto n = static_cast<std::uint64_t>(s.ranks);
    const int accum = s.knobs.gradAccumSteps;
    const bool fsdp = detail::isFsdp(s.strategy);
    // FSDP reduces every micro-step unless no_sync accumulates full gradients locally.
    const int fsdpReductions = fsdp && s.knobs.noSync ? 1 : accum;
    const std::uint64_t gradBytes = plan.fullBytes(g);
    CommBuilder b;
    auto addBucketed = [&](CollectiveKind k, std::uint64_t bytes, std::uint64_t bucket, std::uint64_t eb, int repeats,
                           bool forward) {
        if (n <= 1) return;
        if (plan.bare) {
            b.add(k, bytes, n, bucketCalls(bytes, bucket), repeats);
            return;
        }
        const ShapedBuckets sb = bucketed(plan, k, bucket, eb, n, forward);
        auto it = std::find_if(b.out.byKind.begin(), b.out.byKind.end(), [k](const CommVolume& v) { return v.kind == k; });
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
    switch (s.strategy) {
    case Strategy::Ddp: // ZeRO paper §7.1: all-reduce = reduce-scatter + all-gather ≈ 2Ψ
        addBucketed(CollectiveKind::AllReduce, gradBytes, s.knobs.reduceBucketBytes, g, 1, false);
        break;
    case Strategy::Zero1:
    case Strategy::Zero2: { // ZeRO paper §7.2.1: reduce-scatter grads + all-gather params ≈ 2Ψ
        // ZeRO-2 keeps no full gradient, so it must reduce-scatter every micro-step.
        const int rs = s.strategy == Strategy::Zero2 ? accum : 1;
        addBucketed(CollectiveKind::ReduceScatter, gradBytes, s.knobs.reduceBucketBytes, g, rs, false);
        addBucketed(CollectiveKind::AllGather, plan.fullBytes(p), s.knobs.allGatherBucketBytes, p, 1, true);
        break;
    }
    case Strategy::Zero3:
    case Strategy::FsdpFullShard:
    case Strategy::FsdpShardGradOp:
    case Strategy::FsdpHybridShard: {
        // ZeRO paper §7.2.2: all-gather in forward and again in backward + reduce-scatter ≈ 3Ψ;
        // without resharding after forward (SHARD_GRAD_OP) one all-gather ≈ 2Ψ.
        const int passes = detail::reshardsAfterForward(s) ? 2 : 1;
        const auto units = static_cast<int>(plan.gatheredUnitCount());
        b.add(CollectiveKind::AllGather, plan.fullBytes(p, false, /*includePersistent=*/false),
              plan.shards, units, passes * accum);
        const int rs = s.strategy == Strategy::Zero3 ? accum : fsdpReductions;
        // Every unit's padded gradient is reduce-scattered (persistent units' too).
        b.add(CollectiveKind::ReduceScatter, plan.paddedTotal() * g, plan.shards, static_cast<int>(plan.units.size()), rs);
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
            if (persistentUnits > 0) b.add(CollectiveKind::AllGather, persistentBytes, plan.shards, persistentUnits, 1);
        }
        // HYBRID_SHARD (FSDP paper §3.2.2): each shard is all-reduced across the N/G replicas.
        if (s.strategy == Strategy::FsdpHybridShard) {
            if (plan.bare) {
                b.add(CollectiveKind::AllReduce, plan.shardBytes(g), n / plan.shards,
                      static_cast<int>(plan.units.size()), rs);
            } else {
                // One all-reduce per unit: ring bytes rounded per call, as the communicator counts.
                const std::uint64_t replicas = n / plan.shards;
                for (const auto& u : plan.units) b.add(CollectiveKind::AllReduce, u.padded / plan.shards * g, replicas, 1, rs);
            }
        }
        break;
    }
    }
    const double psiBytes = static_cast<double>(p) * static_cast<double>(plan.params);
    b.out.psiEquivalents = psiBytes > 0 ? static_cast<double>(b.out.totalSentBytes) / psiBytes : 0.0;
    return std::move(b.out);
}

} // namespace shardscope::theory
