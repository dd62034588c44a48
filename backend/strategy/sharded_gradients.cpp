// Gradients: each micro-step's local gradient stored (accumulated where the strategy keeps full
// gradients), and reduced — bucketed all-reduce or reduce-scatter, per chunk of a pipeline
// stage, or one reduce-scatter per unit. Part of the mechanism in sharded.h.
#include "core/error.h"
#include "device/ops.h"
#include "plan/buckets.h"
#include "strategy/sharded.h"

#include <string>

namespace shardscope::strategy::detail {

void Sharded::combine(void* dst, const void* src, std::uint64_t count, bool accumulate) const {
    if (accumulate)
        ops_.accumulate(dst, src, count, mixed_);
    else
        ops_.copy(dst, src, count * eb_);
}

void Sharded::storeGradients(std::int32_t unit, std::span<const float> grads,
                             const MicroStep& micro) {
    UnitState& s = state(unit);
    if (grads.size() != s.n)
        throw Error(ErrorKind::Internal, "storeGradients: wrong element count");
    // ZeRO-2/3 and FSDP (sync) start a fresh full gradient every micro-step; DDP, ZeRO-1 and
    // FSDP no_sync accumulate the local gradient in it across micro-steps.
    const bool accumulate = !policy_.reduceEveryMicroStep && !micro.first();
    if (s.gradFull.empty()) s.gradFull = allocate(s.padded, Category::GradFull, unit, true);
    if (mixed_) {
        if (!accumulate)
            ops_.toBf16(grads.data(), s.gradFull.ptr<Bf16>(), s.n);
        else
            ops_.accumulateRounded(s.gradFull.ptr<Bf16>(), grads.data(), s.n);
    } else {
        if (!accumulate)
            ops_.copy(s.gradFull.data(), grads.data(), s.n * sizeof(float));
        else
            ops_.accumulate(s.gradFull.data(), grads.data(), s.n, false);
    }
}

void Sharded::afterInputGradients(std::int32_t unit) {
    if (policy_.shardParams) reshard(unit);
}

void Sharded::afterWeightGradients(std::int32_t unit, const MicroStep& micro) {
    UnitState& s = state(unit);
    if (policy_.bucketedReduce) {
        const bool reduceNow =
            policy_.reduceEveryMicroStep ? true : (micro.last() && !policy_.shardOptimizer);
        if (policy_.shardGrads) { // ZeRO-2: pack, free the full gradient
            if (reducePlans_.empty())
                combine(s.gradShard.data(), s.gradFull.data(), s.shard, !micro.first());
            else
                packForReduce(unit, micro);
            s.gradFull.reset();
        } else if (reduceNow && !reducePlans_.empty()) { // DDP, last micro-step
            packForReduce(unit, micro);
        }
        return;
    }
    if (policy_.reduceEveryMicroStep || micro.last()) {
        reduceUnit(unit, micro);
        s.gradFull.reset();
    }
}

void Sharded::endBackward(const MicroStep& micro) {
    // ZeRO-1: the full gradients are reduce-scattered after the (last) backward.
    if (policy_.bucketedReduce && policy_.shardOptimizer && !policy_.shardGrads && micro.last() &&
        !reducePlans_.empty())
        for (std::int32_t u = end_ - 1; u >= first_; --u)
            if (holds(u)) packForReduce(u, micro);
    if (reduceBucket_ != 0 || reducePiece_ != 0)
        throw Error(ErrorKind::Internal, "a reduce bucket was left unflushed");
}

// Copies unit's pieces into the bucket(s) they belong to; a bucket is reduced as soon as its
// last piece is in.
void Sharded::packForReduce(std::int32_t unit, const MicroStep& micro) {
    const UnitState& s = state(unit);
    const std::uint64_t slots = reduceOp_ == CollectiveOp::AllReduce ? 1 : shards_;
    if (reduceBucket_ == 0 && reducePiece_ == 0)
        reduceChunk_ = static_cast<std::size_t>(chunkOf(unit));
    const std::vector<plan::Bucket>& plan = reducePlans_.at(reduceChunk_);
    while (reduceBucket_ < plan.size()) {
        const plan::Bucket& b = plan[reduceBucket_];
        const plan::BucketPiece& p = b.pieces[reducePiece_];
        if (p.unit != unit) return;
        if (bucket_.empty())
            bucket_ = device_.allocate(
                b.count * eb_ * (slots + (reduceOp_ == CollectiveOp::ReduceScatter ? 1 : 0)),
                {Category::CommBuffer, Tier::Device, kNoUnit});
        std::uint64_t pos = 0;
        for (std::size_t i = 0; i < reducePiece_; ++i)
            pos += b.pieces[i].length;
        auto* buf = bucket_.ptr<char>();
        const auto* src = s.gradFull.ptr<const char>();
        for (std::uint64_t r = 0; r < slots; ++r)
            ops_.copy(buf + (r * b.count + pos) * eb_, src + (r * s.shard + p.offset) * eb_,
                      p.length * eb_);
        if (++reducePiece_ == b.pieces.size()) {
            flushReduce(b, micro);
            ++reduceBucket_;
            reducePiece_ = 0;
        }
    }
    if (reduceBucket_ == plan.size()) reduceBucket_ = 0; // the chunk's plan is complete
}

void Sharded::flushReduce(const plan::Bucket& b, const MicroStep& micro) {
    std::int32_t unit = b.pieces.front().unit;
    for (const auto& p : b.pieces)
        if (p.unit != unit) unit = kNoUnit; // a bucket spanning units
    auto* buf = bucket_.ptr<char>();
    if (reduceOp_ == CollectiveOp::AllReduce) {
        groups_.data->allReduce(buf, b.count, dtype(), unit);
        std::uint64_t pos = 0;
        for (const auto& p : b.pieces) {
            ops_.copy(state(p.unit).gradFull.ptr<char>() + p.offset * eb_, buf + pos * eb_,
                      p.length * eb_);
            pos += p.length;
        }
    } else {
        char* out = buf + shards_ * b.count * eb_;
        shardComm().reduceScatter(buf, out, b.count, dtype(), unit);
        std::uint64_t pos = 0;
        for (const auto& p : b.pieces) {
            UnitState& s = state(p.unit);
            if (policy_.shardGrads && onHost(s.gradShard)) // ZeRO-Offload: device → host
                intoHost(s.gradShard, p.offset, out + pos * eb_, p.length, !micro.first(), p.unit);
            else if (policy_.shardGrads) // ZeRO-2: into the gradient shard, accumulating over
                                         // micro-steps
                combine(s.gradShard.ptr<char>() + p.offset * eb_, out + pos * eb_, p.length,
                        !micro.first());
            else // ZeRO-1: into the rank's own slice of the full gradient
                ops_.copy(s.gradFull.ptr<char>() + (s.lo + p.offset) * eb_, out + pos * eb_,
                          p.length * eb_);
            pos += p.length;
        }
    }
    bucket_.reset();
}

void Sharded::reduceUnit(std::int32_t unit, const MicroStep& micro) {
    UnitState& s = state(unit);
    // With no_sync the full gradient already holds every micro-step: reduce it once, assign.
    const bool accumulate = policy_.reduceEveryMicroStep && !micro.first();
    const bool hostShard =
        onHost(s.gradShard); // ZeRO-Offload: reduced on the device, then device → host
    Buffer temp;
    void* target = s.gradShard.data();
    if (accumulate || hostShard) {
        temp = allocate(s.shard, Category::CommBuffer, unit);
        target = temp.data();
    }
    if (shards_ > 1)
        shardComm().reduceScatter(s.gradFull.data(), target, s.shard, dtype(), unit);
    else
        ops_.copy(target, s.gradFull.data(), s.shard * eb_);
    if (policy_.hybrid && groups_.replica->size() > 1)
        groups_.replica->allReduce(target, s.shard, dtype(), unit);
    if (hostShard)
        intoHost(s.gradShard, 0, temp.data(), s.shard, accumulate, unit);
    else if (accumulate)
        combine(s.gradShard.data(), temp.data(), s.shard, true);
}

} // namespace shardscope::strategy::detail
