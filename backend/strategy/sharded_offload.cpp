// ZeRO-Offload's tier crossings: what may be offloaded, copies into host-tier buffers, the
// device → host gradient shards and the host → device compute weights.
#include "core/error.h"
#include "core/numeric.h"
#include "device/ops.h"
#include "offload/host_adamw.h"
#include "offload/nvme_store.h"
#include "strategy/sharded.h"

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <utility>

namespace shardscope::strategy::detail {

void Sharded::validateOffload() const {
    const plan::Offload& o = config_.offload;
    const std::string name(plan::strategyName(config_.strategy));
    if (o.optimizer == Tier::Nvme && !offload::nvmeAvailable())
        throwInvalid(
            "--offload-optimizer nvme needs liburing, which this build was configured without");
    if (o.param == Tier::Nvme && !offload::nvmeAvailable())
        throwInvalid(
            "--offload-params nvme needs liburing, which this build was configured without");
    if (o.optimizer != Tier::Device && !policy_.shardOptimizer)
        throwInvalid("--offload-optimizer needs a strategy that shards the optimizer (zero1, "
                     "zero2, zero3, fsdp, "
                     "fsdp_grad_op, fsdp_hybrid), not " +
                     name);
    if ((o.optimizer != Tier::Device || o.param != Tier::Device) && !mixed_)
        throwInvalid("offloading needs --precision bf16 (the host tier holds fp32 master weights "
                     "and bf16 params)");
    if (o.param != Tier::Device && !policy_.shardParams)
        throwInvalid("--offload-params needs a strategy that shards params (zero3, fsdp, "
                     "fsdp_grad_op, fsdp_hybrid), not " +
                     name);
}

void Sharded::put(const Buffer& to, std::uint64_t byteOffset, const void* from,
                  std::uint64_t bytes) {
    if (bytes == 0) return;
    if (!onHost(to))
        ops_.upload(to.ptr<char>() + byteOffset, from, bytes);
    else if (device_.holdsData())
        std::memcpy(to.ptr<char>() + byteOffset, from, bytes);
}

void Sharded::transferEvent(EventKind kind, Transfer t, std::int32_t unit, std::uint64_t bytes) {
    Event e;
    e.kind = kind;
    e.transfer = t;
    e.unit = unit;
    e.bytes = bytes;
    device_.ledger().emit(e);
}

void Sharded::intoHost(Buffer& to, std::uint64_t elementOffset, const void* deviceSrc,
                       std::uint64_t count, bool accumulate, std::int32_t unit) {
    char* dst = to.ptr<char>() + elementOffset * eb_;
    if (!accumulate) {
        if (device_.holdsData()) device_.recordedDownload(dst, deviceSrc, count * eb_, unit);
        return;
    }
    Buffer staging = allocate(count, Category::Workspace, unit, false, Tier::Host);
    if (!device_.holdsData()) return;
    device_.recordedDownload(staging.data(), deviceSrc, count * eb_, unit);
    offload::hostAccumulate(dst, staging.data(), count, mixed_);
}

void Sharded::roundInto(const float* master, std::uint64_t count, void* out, bool outOnHost,
                        std::int32_t unit) {
    if (outOnHost) {
        if (device_.holdsData()) offload::hostToBf16(master, static_cast<Bf16*>(out), count);
        return;
    }
    // Rounded on the host, then one host → device copy of the compute weights.
    Buffer staging = device_.allocateArray<Bf16>(count, {Category::Workspace, Tier::Host, kNoUnit});
    if (device_.holdsData()) offload::hostToBf16(master, staging.ptr<Bf16>(), count);
    device_.recordedUpload(out, staging.data(), count * sizeof(Bf16), unit);
}

// ---- the NVMe tier ----------------------------------------------------------------------------

void Sharded::setupNvme(UnitState& s, std::int32_t unit, std::uint64_t elements) {
    const std::uint64_t bytes = elements * sizeof(float);
    // Allocation order as on the other tiers: master, m, v.
    for (Category c : {Category::MasterFp32, Category::AdamM, Category::AdamV})
        nvmeCells_.add(c, unit, bytes);
    s.nvmeElements = elements;
    s.nvmeRegion = offload::alignedBytes(bytes);
    if (nvme_) s.nvmeAt = nvme_->reserve(3 * s.nvmeRegion);
}

void Sharded::writeInitialNvme(UnitState& s, std::int32_t unit, std::span<const float> master) {
    if (!nvme_ || s.nvmeElements == 0) return;
    Buffer staging = device_.allocate(3 * s.nvmeRegion, {Category::Workspace, Tier::Host, unit},
                                      true); // m, v = 0
    std::memcpy(staging.data(), master.data(), master.size() * sizeof(float));
    transferEvent(EventKind::TransferBegin, Transfer::NvmeWrite, unit, 3 * s.nvmeRegion);
    nvme_->write(s.nvmeAt, staging.data(), 3 * s.nvmeRegion);
    transferEvent(EventKind::TransferEnd, Transfer::NvmeWrite, unit, 3 * s.nvmeRegion);
}

std::vector<float> Sharded::readNvmeMaster(const UnitState& s) {
    std::vector<float> out(s.nvmeElements);
    if (!nvme_ || s.nvmeElements == 0) return out;
    // Instrumentation (gatherWeights), not a step: outside the ledger.
    std::unique_ptr<void, decltype(&std::free)> buffer(
        std::aligned_alloc(offload::kAlign, s.nvmeRegion), &std::free);
    if (!buffer)
        throw Error(ErrorKind::OutOfMemory, "nvme: no host memory to read the master weights back");
    nvme_->read(s.nvmeAt, buffer.get(), s.nvmeRegion);
    std::memcpy(out.data(), buffer.get(), out.size() * sizeof(float));
    return out;
}

void Sharded::startNvmeRead(UnitState& s, std::int32_t unit) {
    // The unit's three regions in one read, into pinned staging (host tier, in the ledger).
    s.nvmeStage = device_.allocate(3 * s.nvmeRegion, {Category::Workspace, Tier::Host, unit});
    if (!nvme_ || s.nvmeElements == 0) return;
    transferEvent(EventKind::TransferBegin, Transfer::NvmeRead, unit, 3 * s.nvmeRegion);
    s.nvmeTicket = nvme_->startRead(s.nvmeAt, s.nvmeStage.data(), 3 * s.nvmeRegion);
    s.nvmeTransfer = Transfer::NvmeRead;
}

void Sharded::finishNvmeTransfer(UnitState& s) {
    if (!nvme_ || s.nvmeTicket == 0) return;
    // The rank needs the data now: if it is not there yet, the time until it is is a wait.
    if (!nvme_->poll(s.nvmeTicket))
        transferEvent(EventKind::TransferWait, s.nvmeTransfer, unitOf(s), 3 * s.nvmeRegion);
    nvme_->wait(std::exchange(s.nvmeTicket, 0));
    transferEvent(EventKind::TransferEnd, s.nvmeTransfer, unitOf(s), 3 * s.nvmeRegion);
}

void Sharded::pollNvme() {
    if (!nvme_) return;
    for (UnitState& s : held())
        if (s.nvmeTicket != 0 && nvme_->poll(s.nvmeTicket)) finishNvmeTransfer(s);
}

// Pipelined per unit: unit u+1's read is in flight while unit u updates, and unit u's write
// drains while unit u+1 updates; at most three staging buffers (u−1 writing, u, u+1 reading).
OwnedSlice Sharded::beginUpdate(std::int32_t unit, OwnedSlice o) {
    if (optimizerTier_ != Tier::Nvme) return o;
    pollNvme();
    UnitState& s = state(unit);
    if (s.nvmeStage.empty()) startNvmeRead(s, unit); // not prefetched: the first unit
    finishNvmeTransfer(s);
    if (holds(unit + 1)) startNvmeRead(state(unit + 1), unit + 1);
    char* base = s.nvmeStage.ptr<char>();
    o.weights = reinterpret_cast<float*>(base);
    o.m = reinterpret_cast<float*>(base + s.nvmeRegion);
    o.v = reinterpret_cast<float*>(base + 2 * s.nvmeRegion);
    return o;
}

void Sharded::endUpdate(std::int32_t unit) {
    if (optimizerTier_ != Tier::Nvme) return;
    pollNvme();
    if (holds(unit - 1)) { // the previous unit's write has drained behind this unit's update
        UnitState& previous = state(unit - 1);
        finishNvmeTransfer(previous);
        previous.nvmeStage.reset();
    }
    UnitState& s = state(unit);
    if (nvme_ && s.nvmeElements > 0) {
        transferEvent(EventKind::TransferBegin, Transfer::NvmeWrite, unit, 3 * s.nvmeRegion);
        s.nvmeTicket = nvme_->startWrite(s.nvmeAt, s.nvmeStage.data(), 3 * s.nvmeRegion);
        s.nvmeTransfer = Transfer::NvmeWrite;
    }
    const float* master = s.nvmeStage.ptr<const float>();
    // The compute weights while the master is in memory (the write only reads it): into the
    // param shard (ZeRO-3, FSDP), or kept rounded for the all-gather after the optimizer
    // (ZeRO-1/2, persistent units).
    if (paramsOnNvme(s)) {
        writeNvmeParams(unit, master);
    } else if (policy_.shardParams && !s.persistent) {
        roundInto(master, s.shard, s.paramShard.data(), onHost(s.paramShard), unit);
    } else {
        s.rounded = device_.allocateArray<Bf16>(s.shard, {Category::Workspace, Tier::Host, unit});
        if (device_.holdsData()) offload::hostToBf16(master, s.rounded.ptr<Bf16>(), s.shard);
    }
    if (!holds(unit + 1)) { // the last: the step goes on with every state in its file
        finishNvmeTransfer(s);
        s.nvmeStage.reset();
    }
}

// ---- parameters on the NVMe tier (--offload-params nvme)
// -----------------------------------------
//
// A unit's bf16 shard lives in its file region; on its way to the all-gather it is read into a
// host staging buffer (workspace, host tier), read ahead like the all-gather is prefetched (the
// next unit's read is in flight while this unit computes), then copied host → device. After the
// optimizer the updated shard is rounded into another host staging buffer and written back while
// the next unit updates; one write is in flight at a time and the last one completes before the
// optimizer step returns.

void Sharded::setupNvmeParams(UnitState& s, std::int32_t unit) {
    nvmeCells_.add(Category::ParamShard, unit, s.shard * eb_);
    s.paramRegion = offload::alignedBytes(s.shard * eb_);
    if (nvme_) s.paramAt = nvme_->reserve(s.paramRegion);
}

void Sharded::writeInitialNvmeParams(UnitState& s, std::int32_t unit,
                                     std::span<const float> values) {
    if (!nvme_) return;
    Buffer staging = device_.allocate(s.paramRegion, {Category::Workspace, Tier::Host, unit}, true);
    offload::hostToBf16(values.data(), staging.ptr<Bf16>(), values.size());
    transferEvent(EventKind::TransferBegin, Transfer::NvmeWrite, unit, s.paramRegion);
    nvme_->write(s.paramAt, staging.data(), s.paramRegion);
    transferEvent(EventKind::TransferEnd, Transfer::NvmeWrite, unit, s.paramRegion);
}

void Sharded::beginParamRead(UnitState& s, std::int32_t unit) {
    s.paramRead = device_.allocate(s.paramRegion, {Category::Workspace, Tier::Host, unit});
    if (!nvme_) return;
    transferEvent(EventKind::TransferBegin, Transfer::NvmeRead, unit, s.paramRegion);
    s.paramReadTicket = nvme_->startRead(s.paramAt, s.paramRead.data(), s.paramRegion);
}

void Sharded::startParamRead(std::int32_t unit) {
    UnitState& s = state(unit);
    // Only for a unit the pass will gather (FSDP's SHARD_GRAD_OP keeps it gathered for backward).
    if (!paramsOnNvme(s) || !s.paramFull.empty() || !s.paramRead.empty()) return;
    beginParamRead(s, unit);
}

const void* Sharded::arrivedParams(UnitState& s, std::int32_t unit) {
    if (s.paramRead.empty()) beginParamRead(s, unit); // not read ahead: a pass's first unit
    if (nvme_ && s.paramReadTicket != 0) {
        // The all-gather needs the shard now: if the read is not done, the time until it is is a
        // wait.
        if (!nvme_->poll(s.paramReadTicket))
            transferEvent(EventKind::TransferWait, Transfer::NvmeRead, unit, s.paramRegion);
        nvme_->wait(std::exchange(s.paramReadTicket, 0));
        transferEvent(EventKind::TransferEnd, Transfer::NvmeRead, unit, s.paramRegion);
    }
    return s.paramRead.data();
}

void Sharded::writeNvmeParams(std::int32_t unit, const float* hostMaster) {
    finishParamWrite(); // the previous unit's write has drained behind this unit's update
    UnitState& s = state(unit);
    s.paramWrite = device_.allocate(s.paramRegion, {Category::Workspace, Tier::Host, unit});
    if (hostMaster) {
        if (device_.holdsData()) offload::hostToBf16(hostMaster, s.paramWrite.ptr<Bf16>(), s.shard);
    } else { // the device optimizer: rounded on the device, then device → host
        Buffer staging = allocate(s.shard, Category::Workspace, unit);
        ops_.toBf16(s.master.ptr<const float>(), staging.ptr<Bf16>(), s.shard);
        if (device_.holdsData())
            device_.recordedDownload(s.paramWrite.data(), staging.data(), s.shard * eb_, unit);
    }
    paramWriting_ = unit;
    if (!nvme_) return; // a device without memory: nothing to write
    // The region's alignment tail goes to the file too: defined bytes, not leftovers.
    std::memset(s.paramWrite.ptr<char>() + s.shard * eb_, 0, s.paramRegion - s.shard * eb_);
    transferEvent(EventKind::TransferBegin, Transfer::NvmeWrite, unit, s.paramRegion);
    s.paramWriteTicket = nvme_->startWrite(s.paramAt, s.paramWrite.data(), s.paramRegion);
}

void Sharded::finishParamWrite() {
    if (paramWriting_ == kNoUnit) return;
    const std::int32_t unit = std::exchange(paramWriting_, kNoUnit);
    UnitState& s = state(unit);
    if (nvme_ && s.paramWriteTicket != 0) {
        if (!nvme_->poll(s.paramWriteTicket))
            transferEvent(EventKind::TransferWait, Transfer::NvmeWrite, unit, s.paramRegion);
        nvme_->wait(std::exchange(s.paramWriteTicket, 0));
        transferEvent(EventKind::TransferEnd, Transfer::NvmeWrite, unit, s.paramRegion);
    }
    s.paramWrite.reset();
}

} // namespace shardscope::strategy::detail
