// The one mechanism behind every strategy (plan/policy.h says which parts each one uses).
#include "strategy/sharded.h"

#include "core/error.h"
#include "core/numeric.h"
#include "device/ops.h"
#include "model/layout.h"
#include "plan/buckets.h"
#include "plan/policy.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace shardscope::strategy {

std::vector<comm::Communicator*> CommGroups::distinct() const {
    std::vector<comm::Communicator*> out;
    for (comm::Communicator* c : {world, shard, replica, tensor, data, pipe})
        if (c && std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
    return out;
}

namespace detail {

Sharded::Sharded(const StrategyConfig& config, device::Device& device, const CommGroups& groups)
    : config_(config), policy_(plan::policyFor(config.strategy, config.knobs)), device_(device),
      ops_(device.ops()), groups_(groups),
      mixed_(config.precision == plan::PrecisionKind::MixedBf16),
      eb_(mixed_ ? sizeof(Bf16) : sizeof(float)), layouts_(plan::unitLayouts(config.shape)) {
    if (!mixed_ && config.precision != plan::PrecisionKind::Fp32)
        throwInvalid("precision " + std::string(plan::precisionName(config.precision)) +
                     " is not supported by the trainer (use bf16 or fp32)");
    if (!groups_.world) throw Error(ErrorKind::Internal, "a strategy needs a world communicator");
    if (!groups_.data) groups_.data = groups_.world;
    if (!groups_.shard) groups_.shard = groups_.data;
    const std::int64_t tp = config.shape.tp;
    const int stages = groups_.pipe ? groups_.pipe->size() : 1;
    if (tp > 1 && (!groups_.tensor || groups_.tensor->size() != tp ||
                   groups_.tensor->size() * groups_.data->size() * stages != groups_.world->size()))
        throw Error(ErrorKind::Internal,
                    "tensor parallel " + std::to_string(tp) +
                        " needs a TP group of that size and a DP group across them");
    const auto unitTotal = static_cast<std::int32_t>(layouts_.size());
    first_ = config.firstUnit;
    end_ = config.endUnit == 0 ? unitTotal : config.endUnit;
    if (first_ < 0 || first_ >= end_ || end_ > unitTotal ||
        (stages == 1 && (first_ != 0 || end_ != unitTotal)))
        throw Error(ErrorKind::Internal, "a stage's units [" + std::to_string(first_) + ", " +
                                             std::to_string(end_) + ") of " +
                                             std::to_string(unitTotal));
    chunks_ = {{first_, end_}};
    if (config.virtualStages > 1) {
        if (stages <= 1) throw Error(ErrorKind::Internal, "virtual stages need a pipeline group");
        chunks_ = plan::stageChunks(static_cast<int>(config.shape.layers), stages,
                                    config.virtualStages, groups_.pipe->rank());
        if (chunks_.front().first != first_ || chunks_.back().end != end_)
            throw Error(ErrorKind::Internal, "a stage's span is not its chunks'");
    }
    if (stages > 1 && tp <= 1 && groups_.data->size() * stages != groups_.world->size())
        throw Error(ErrorKind::Internal, "a pipeline of " + std::to_string(stages) +
                                             " stages needs a DP group of world / stages ranks");
    if (policy_.hybrid) {
        const int g = config.knobs.hybridGroupSize;
        if (!groups_.replica || groups_.shard->size() != g ||
            groups_.shard->size() * groups_.replica->size() != groups_.data->size())
            throw Error(ErrorKind::Internal, "fsdp_hybrid needs a shard group of " +
                                                 std::to_string(g) +
                                                 " ranks and a replica group across the groups");
    } else if (groups_.shard->size() != groups_.data->size()) {
        throw Error(ErrorKind::Internal, "only fsdp_hybrid shards over a sub-group");
    }
    if (config.strategy != plan::Strategy::Ddp) {
        shards_ = static_cast<std::uint64_t>(groups_.shard->size());
        shardRank_ = static_cast<std::uint64_t>(groups_.shard->rank());
    }
    validateOffload();
    optimizerTier_ = config.offload.optimizer;
    gradTier_ = optimizerTier_ != Tier::Device && policy_.shardGrads ? Tier::Host : Tier::Device;
    paramTier_ = config.offload.param;
    nvmeCells_.ledger = &device_.ledger();
    if ((optimizerTier_ == Tier::Nvme || paramTier_ == Tier::Nvme) && device_.holdsData())
        nvme_ = std::make_unique<offload::NvmeStore>(config.nvme, groups_.world->rank());
    setup();
}

void Sharded::setup() {
    const auto count = static_cast<std::int32_t>(layouts_.size());
    units_.resize(layouts_.size());
    for (std::int32_t u = 0; u < count; ++u) {
        UnitState& s = state(u);
        s.layout = &layouts_[static_cast<std::size_t>(u)];
        s.n = s.layout->elements();
        if (!holds(u)) continue; // another stage's unit
        s.padded = s.layout->paddedElements(shards_);
        s.shard = s.padded / shards_;
        s.lo = shardRank_ * s.shard;
        s.persistent = policy_.shardParams && policy_.persistenceThreshold > 0 &&
                       s.n <= policy_.persistenceThreshold;
        const std::uint64_t optimizerElements = policy_.shardOptimizer ? s.shard : s.n;
        // Allocation order per unit: params, grads, master, m, v (what an OOM names first).
        if (!policy_.shardParams)
            s.paramFull = allocate(s.padded, Category::ParamFull, u);
        else if (s.persistent)
            s.paramFull = allocate(s.n, Category::ParamFull, u);
        else if (paramsOnNvme(s))
            setupNvmeParams(s, u);
        else
            s.paramShard = allocate(s.shard, Category::ParamShard, u, false, paramTier_);
        if (!policy_.shardGrads)
            s.gradFull = allocate(s.padded, Category::GradFull, u, true);
        else
            s.gradShard = allocate(s.shard, Category::GradShard, u, true, gradTier_);
        if (optimizerTier_ == Tier::Nvme) {
            setupNvme(s, u, optimizerElements);
        } else {
            if (mixed_)
                s.master = device_.allocateArray<float>(optimizerElements,
                                                        {Category::MasterFp32, optimizerTier_, u});
            s.adamM = device_.allocateArray<float>(optimizerElements,
                                                   {Category::AdamM, optimizerTier_, u}, true);
            s.adamV = device_.allocateArray<float>(optimizerElements,
                                                   {Category::AdamV, optimizerTier_, u}, true);
        }

        // Every rank initialises the whole unit on the host (deterministic in seed and unit),
        // uploads its part. Host staging is not device memory: it is not in the ledger. A device
        // without memory (a dry run) has nothing to initialise.
        if (!device_.holdsData()) continue;
        std::vector<float> full(s.padded);
        initialValues(u, full);
        const std::span<const float> all(full);
        const std::span<const float> mine = all.subspan(s.lo, s.shard);
        auto uploadBf16 = [&](std::span<const float> values, Buffer& to) {
            std::vector<Bf16> rounded(values.size());
            std::transform(values.begin(), values.end(), rounded.begin(),
                           [](float f) { return toBf16(f); });
            put(to, 0, rounded.data(), rounded.size() * sizeof(Bf16));
        };
        if (mixed_) {
            const std::span<const float> masterValues =
                policy_.shardOptimizer ? mine : all.first(s.n);
            if (optimizerTier_ == Tier::Nvme)
                writeInitialNvme(s, u, masterValues);
            else
                put(s.master, 0, masterValues.data(), masterValues.size() * sizeof(float));
            if (!s.paramFull.empty()) uploadBf16(all.first(s.paramFull.bytes() / eb_), s.paramFull);
            if (!s.paramShard.empty())
                uploadBf16(mine, s.paramShard);
            else if (paramsOnNvme(s))
                writeInitialNvmeParams(s, u, mine);
        } else {
            if (!s.paramFull.empty())
                ops_.upload(s.paramFull.data(), full.data(), s.paramFull.bytes());
            if (!s.paramShard.empty())
                ops_.upload(s.paramShard.data(), mine.data(), s.shard * sizeof(float));
        }
    }
    // Bucket plans (plan/buckets.h: the prediction cuts them the same way).
    if (policy_.bucketedReduce && groups_.data->size() > 1) {
        reduceOp_ = policy_.shardOptimizer ? CollectiveOp::ReduceScatter : CollectiveOp::AllReduce;
        const std::uint64_t slots = reduceOp_ == CollectiveOp::AllReduce ? 1 : shards_;
        for (const plan::StageUnits& c : chunks_) {
            std::vector<plan::UnitRange> backward;
            for (std::int32_t u = c.end - 1; u >= c.first; --u) {
                const UnitState& s = state(u);
                backward.push_back({u, reduceOp_ == CollectiveOp::AllReduce ? s.n : s.shard});
            }
            reducePlans_.push_back(plan::planBuckets(
                backward, plan::bucketCapacity(config_.knobs.reduceBucketBytes, eb_, slots)));
        }
        if (policy_.shardOptimizer) {
            std::vector<plan::UnitRange> forward;
            for (std::int32_t u = first_; u < end_; ++u)
                if (holds(u)) forward.push_back({u, state(u).shard});
            gatherPlan_ = plan::planBuckets(
                forward, plan::bucketCapacity(config_.knobs.allGatherBucketBytes, eb_, shards_));
        }
    }
}

// The unit's initial weights on this rank (padded with zeros): the whole model's values, so a
// TP slice starts exactly where the matching part of an untiled run starts.
void Sharded::initialValues(std::int32_t unit, std::vector<float>& padded) const {
    const plan::UnitLayout& layout = layouts_[static_cast<std::size_t>(unit)];
    if (config_.shape.tp <= 1) {
        model::initUnit(layout, config_.shape.layers, config_.seed, unit, padded.data(),
                        padded.size());
        return;
    }
    const plan::UnitLayout whole =
        plan::unitLayouts(plan::untiled(config_.shape))[static_cast<std::size_t>(unit)];
    std::vector<float> all(whole.elements());
    model::initUnit(whole, config_.shape.layers, config_.seed, unit, all.data(), all.size());
    std::fill(padded.begin(), padded.end(), 0.0f);
    plan::copyTpSlice(whole, layout, config_.shape.tp, groups_.tensor->rank(), all.data(),
                      padded.data(), true);
}

// ---- parameters -------------------------------------------------------------------------------

// Unshards `unit`. A prefetch (`prefetch`) is started and left in flight while the current
// unit computes; anything else is complete on return. One prefetch is in flight at a time (the
// communicator's rule), so a deeper window finishes the older one before starting the next.
void Sharded::gather(std::int32_t unit, bool prefetch) {
    if (inflightUnit_ == unit) {
        if (!prefetch) finishInflight();
        return;
    }
    UnitState& s = state(unit);
    if (s.persistent || !s.paramFull.empty()) return;
    s.paramFull = allocate(s.padded, Category::ParamFull, unit);
    // The shard in device or host memory, or read from its file into host staging.
    const bool hostShard = paramsOnNvme(s) || onHost(s.paramShard);
    const void* shard = paramsOnNvme(s) ? arrivedParams(s, unit) : s.paramShard.data();
    if (shards_ == 1) {
        if (hostShard)
            device_.recordedUpload(s.paramFull.data(), shard, s.shard * eb_, unit);
        else
            ops_.copy(s.paramFull.data(), shard, s.shard * eb_);
        s.paramRead.reset();
        return;
    }
    if (prefetch) finishInflight(); // before its staging buffer is allocated: one in flight
    // A host-tier shard goes host → device first: the all-gather's input is device memory.
    const void* input = shard;
    if (hostShard) {
        s.stage = allocate(s.shard, Category::CommBuffer, unit);
        device_.recordedUpload(s.stage.data(), shard, s.shard * eb_, unit);
        input = s.stage.data();
        s.paramRead.reset();
    }
    if (!prefetch) {
        shardComm().allGather(input, s.paramFull.data(), s.shard, dtype(), unit);
        s.stage.reset();
    } else {
        inflightTicket_ =
            shardComm().startAllGather(input, s.paramFull.data(), s.shard, dtype(), unit);
        inflightUnit_ = unit;
    }
}

void Sharded::finishInflight() {
    if (inflightUnit_ == kNoUnit) return;
    const std::int32_t unit = std::exchange(inflightUnit_, kNoUnit);
    shardComm().finishAllGather(inflightTicket_);
    state(unit).stage.reset();
}

void Sharded::reshard(std::int32_t unit) {
    UnitState& s = state(unit);
    if (inflightUnit_ == unit) finishInflight(); // never free a buffer a collective still writes
    if (!s.persistent) s.paramFull.reset();
}

int Sharded::chunkOf(std::int32_t u) const {
    for (std::size_t c = 0; c < chunks_.size(); ++c)
        if (u >= chunks_[c].first && u < chunks_[c].end) return static_cast<int>(c);
    return -1;
}

// Prefetches stay inside the unit's chunk: the next chunk's forward comes after other ops.
void Sharded::beforeForward(std::int32_t unit) {
    if (!policy_.shardParams) return;
    const std::int32_t chunkEnd = chunk(unit).end;
    // The unit itself first, then the prefetched ones (they are live while this one computes).
    const std::int32_t end = std::min(chunkEnd, unit + policy_.gatherWindow);
    for (std::int32_t u = unit; u < end; ++u)
        gather(u, u != unit);
    if (end < chunkEnd)
        startParamRead(end); // NVMe: the next unit's read in flight while this one computes
}

void Sharded::afterForward(std::int32_t unit) {
    if (policy_.shardParams && policy_.reshardAfterForward) reshard(unit);
}

void Sharded::beforeBackward(std::int32_t unit) {
    if (!policy_.shardParams) return;
    const std::int32_t chunkFirst = chunk(unit).first;
    const std::int32_t end = std::max(chunkFirst - 1, unit - policy_.gatherWindow);
    for (std::int32_t u = unit; u > end; --u)
        gather(u, u != unit);
    if (end >= chunkFirst) startParamRead(end);
}

ParamView Sharded::params(std::int32_t unit) const {
    const UnitState& s = units_.at(static_cast<std::size_t>(unit));
    if (s.paramFull.empty() || inflightUnit_ == unit)
        throw Error(ErrorKind::Internal, "unit " + s.layout->name() + " is not unsharded");
    return {s.paramFull.data(), mixed_};
}

// ---- gradients (storeGradients … reduceUnit: sharded_gradients.cpp) ---------------------------

// ---- optimizer --------------------------------------------------------------------------------

OwnedSlice Sharded::owned(std::int32_t unit) {
    UnitState& s = state(unit);
    OwnedSlice o;
    if (!policy_.shardOptimizer) {
        o.begin = 0;
        o.end = s.n;
        o.weights = mixed_ ? s.master.ptr<float>() : s.paramFull.ptr<float>();
        o.grads = s.gradFull.data();
        // Every rank holds everything; the norm is split into equal parts.
        const auto ranks = static_cast<std::uint64_t>(groups_.data->size());
        const auto r = static_cast<std::uint64_t>(groups_.data->rank());
        const std::uint64_t chunk = (s.n + ranks - 1) / ranks;
        o.normBegin = std::min(s.n, r * chunk);
        o.normEnd = std::min(s.n, (r + 1) * chunk);
    } else {
        o.begin = s.lo;
        o.end = std::max(s.lo, std::min(s.lo + s.shard, s.n));
        if (mixed_)
            o.weights = s.master.ptr<float>();
        else if (!s.paramShard.empty())
            o.weights = s.paramShard.ptr<float>();
        else
            o.weights = s.paramFull.ptr<float>() + s.lo; // ZeRO-1/2 and persistent units: in place
        o.grads = policy_.shardGrads ? s.gradShard.data() : s.gradFull.ptr<char>() + s.lo * eb_;
        const bool counts = !policy_.hybrid || groups_.replica->rank() == 0;
        o.normBegin = o.begin;
        o.normEnd = counts ? o.end : o.begin;
    }
    o.gradsBf16 = mixed_;
    o.stateOnHost = optimizerTier_ != Tier::Device; // NVMe: staged in host memory by beginUpdate
    o.gradsOnHost = policy_.shardGrads && onHost(s.gradShard);
    o.m = s.adamM.ptr<float>();
    o.v = s.adamV.ptr<float>();
    return o;
}

// This rank's updated parameters [offset, offset + length) of its slice, in the working dtype.
void Sharded::writeOwnParams(UnitState& s, std::uint64_t offset, std::uint64_t length, void* out) {
    if (mixed_ && optimizerTier_ == Tier::Nvme) { // rounded when the unit was updated (endUpdate)
        device_.recordedUpload(out, s.rounded.ptr<const Bf16>() + offset, length * sizeof(Bf16),
                               unitOf(s));
        return;
    }
    if (mixed_ && onHost(s.master)) {
        roundInto(s.master.ptr<const float>() + offset, length, out, false, unitOf(s));
        return;
    }
    if (mixed_) {
        ops_.toBf16(s.master.ptr<const float>() + offset, static_cast<Bf16*>(out), length);
        return;
    }
    // fp32: the weights themselves (a persistent unit's param_full holds only n elements).
    const float* w =
        !s.paramShard.empty() ? s.paramShard.ptr<float>() : s.paramFull.ptr<float>() + s.lo;
    const std::uint64_t limit = s.paramShard.empty() ? s.n - std::min(s.n, s.lo) : s.shard;
    const std::uint64_t valid = offset >= limit ? 0 : std::min(length, limit - offset);
    ops_.copy(out, w + offset, valid * sizeof(float));
    ops_.zero(static_cast<float*>(out) + valid, (length - valid) * sizeof(float));
}

void Sharded::afterOptimizer() {
    updateComputeWeights();
    finishParamWrite(); // the next forward reads the files
    for (UnitState& s : held())
        s.rounded.reset(); // the NVMe tier's rounded weights are consumed
}

void Sharded::updateComputeWeights() {
    if (!policy_.shardOptimizer) { // DDP
        if (mixed_)
            for (UnitState& s : held())
                ops_.toBf16(s.master.ptr<const float>(), s.paramFull.ptr<Bf16>(), s.n);
        return;
    }
    if (!policy_.shardParams) { // ZeRO-1/2: all-gather the updated parameters
        if (shards_ == 1) {
            if (mixed_)
                for (UnitState& s : held())
                    writeOwnParams(s, 0, s.padded, s.paramFull.data());
            return;
        }
        gatherUpdatedParams();
        return;
    }
    for (std::int32_t u = first_; u < end_; ++u) {
        if (!holds(u)) continue; // another stage's (between two chunks)
        UnitState& s = state(u);
        if (s.persistent)
            gatherPersistent(s, u);
        else if (optimizerTier_ == Tier::Nvme)
            continue; // rounded into the shard (or its file) by endUpdate
        else if (paramsOnNvme(s))
            writeNvmeParams(u, onHost(s.master) ? s.master.ptr<const float>() : nullptr);
        else if (mixed_ && onHost(s.master))
            roundInto(s.master.ptr<const float>(), s.shard, s.paramShard.data(),
                      onHost(s.paramShard), u);
        else if (mixed_ &&
                 onHost(s.paramShard)) { // device optimizer, host-tier params: round, device → host
            Buffer staging = allocate(s.shard, Category::Workspace, u);
            ops_.toBf16(s.master.ptr<const float>(), staging.ptr<Bf16>(), s.shard);
            if (device_.holdsData())
                device_.recordedDownload(s.paramShard.data(), staging.data(), s.shard * eb_, u);
        } else if (mixed_)
            ops_.toBf16(s.master.ptr<const float>(), s.paramShard.ptr<Bf16>(), s.shard);
    }
}

void Sharded::gatherUpdatedParams() {
    for (const plan::Bucket& b : gatherPlan_) {
        Buffer staging = device_.allocate(b.count * eb_ * shards_,
                                          {Category::CommBuffer, Tier::Device, kNoUnit});
        auto* buf = staging.ptr<char>();
        char* mine = buf + shardRank_ * b.count * eb_;
        std::uint64_t pos = 0;
        std::int32_t unit = b.pieces.front().unit;
        for (const auto& p : b.pieces) {
            writeOwnParams(state(p.unit), p.offset, p.length, mine + pos * eb_);
            pos += p.length;
            if (p.unit != unit) unit = kNoUnit;
        }
        shardComm().allGather(mine, buf, b.count, dtype(), unit);
        for (std::uint64_t r = 0; r < shards_; ++r) {
            pos = 0;
            for (const auto& p : b.pieces) {
                UnitState& s = state(p.unit);
                ops_.copy(s.paramFull.ptr<char>() + (r * s.shard + p.offset) * eb_,
                          buf + (r * b.count + pos) * eb_, p.length * eb_);
                pos += p.length;
            }
        }
    }
}

// ZeRO-3 persistent unit: sharded optimizer, whole params — gather the updated slices.
void Sharded::gatherPersistent(UnitState& s, std::int32_t unit) {
    Buffer staging = allocate(s.padded, Category::CommBuffer, unit);
    auto* buf = staging.ptr<char>();
    char* mine = buf + s.lo * eb_;
    writeOwnParams(s, 0, s.shard, mine);
    if (shards_ > 1) shardComm().allGather(mine, buf, s.shard, dtype(), unit);
    ops_.copy(s.paramFull.data(), buf, s.n * eb_);
}

// ---- bookkeeping (gatherWeights: sharded_weights.cpp) ----------------------------------------

void Sharded::discardTransients() {
    try {
        finishInflight(); // its buffer is about to be freed
    } catch (...) {
        // The step is being abandoned for another error already; that one is reported.
    }
    bucket_.reset();
    reduceBucket_ = 0;
    reducePiece_ = 0;
    if (nvme_) nvme_->waitAll(); // before the staging it reads into or writes from is freed
    paramWriting_ = kNoUnit;
    for (UnitState& s : held()) {
        s.paramReadTicket = s.paramWriteTicket = 0;
        s.paramRead.reset();
        s.paramWrite.reset();
        s.stage.reset();
        s.nvmeTicket = 0;
        s.nvmeStage.reset();
        s.rounded.reset();
        if (policy_.shardParams && !s.persistent) s.paramFull.reset();
        if (policy_.shardGrads) s.gradFull.reset();
    }
}

} // namespace detail

std::unique_ptr<Sharding> makeSharding(const StrategyConfig& config, device::Device& device,
                                       const CommGroups& groups) {
    return std::make_unique<detail::Sharded>(config, device, groups);
}

} // namespace shardscope::strategy
