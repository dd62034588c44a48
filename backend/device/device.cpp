#include "device/device.h"

#include "core/error.h"
#include "device/ops.h"

#include <cstdlib>
#include <cstring>

namespace shardscope::device {

Buffer& Buffer::operator=(Buffer&& o) noexcept {
    if (this != &o) {
        reset();
        device_ = std::exchange(o.device_, nullptr);
        data_ = std::exchange(o.data_, nullptr);
        bytes_ = std::exchange(o.bytes_, 0);
        tag_ = o.tag_;
    }
    return *this;
}

void Buffer::reset() noexcept {
    if (data_ && device_) device_->release(data_, bytes_, tag_);
    device_ = nullptr;
    data_ = nullptr;
    bytes_ = 0;
}

Buffer Device::allocate(std::uint64_t bytes, AllocTag tag, bool zeroed) {
    if (bytes == 0) return Buffer();
    if (tag.tier == Tier::Nvme)
        throw Error(ErrorKind::Internal, "nvme-tier bytes live in files, not in a device buffer");
    ledger_.recordAlloc(tag.category, tag.tier, bytes, tag.unit);
    void* data = nullptr;
    try {
        data = tag.tier == Tier::Host ? rawAllocateHost(bytes) : rawAllocate(bytes);
    } catch (...) {
        ledger_.recordFree(tag.category, tag.tier, bytes, tag.unit);
        throw;
    }
    Buffer buffer(this, data, bytes, tag); // from here on a throw frees it and its ledger entry
    if (zeroed) {
        if (tag.tier == Tier::Host) {
            if (holdsData()) std::memset(data, 0, bytes);
        } else {
            rawZero(data, bytes);
        }
    }
    return buffer;
}

void Device::release(void* data, std::uint64_t bytes, const AllocTag& tag) noexcept {
    if (tag.tier == Tier::Host)
        rawFreeHost(data, bytes);
    else
        rawFree(data, bytes);
    ledger_.recordFree(tag.category, tag.tier, bytes, tag.unit);
}

namespace {
void emitTransfer(Ledger& ledger, EventKind kind, Transfer t, std::int32_t unit,
                  std::uint64_t bytes) {
    Event e;
    e.kind = kind;
    e.transfer = t;
    e.unit = unit;
    e.bytes = bytes;
    ledger.emit(e);
}
} // namespace

void Device::recordedUpload(void* dst, const void* host, std::uint64_t bytes, std::int32_t unit) {
    ops().synchronize();
    emitTransfer(ledger_, EventKind::TransferBegin, Transfer::HostToDevice, unit, bytes);
    ops().upload(dst, host, bytes);
    emitTransfer(ledger_, EventKind::TransferEnd, Transfer::HostToDevice, unit, bytes);
}

void Device::recordedDownload(void* host, const void* src, std::uint64_t bytes, std::int32_t unit) {
    ops().synchronize();
    emitTransfer(ledger_, EventKind::TransferBegin, Transfer::DeviceToHost, unit, bytes);
    ops().download(host, src, bytes);
    emitTransfer(ledger_, EventKind::TransferEnd, Transfer::DeviceToHost, unit, bytes);
}

namespace {
constexpr std::uint64_t kHostAlignBytes = 4096; // a page: O_DIRECT staging and DMA friendly
}

void* Device::rawAllocateHost(std::uint64_t bytes) {
    const std::uint64_t rounded = (bytes + kHostAlignBytes - 1) / kHostAlignBytes * kHostAlignBytes;
    void* p = std::aligned_alloc(kHostAlignBytes, rounded);
    if (!p)
        throw Error(ErrorKind::OutOfMemory,
                    "host: the system refused " + std::to_string(bytes) + " bytes");
    return p;
}

void Device::rawFreeHost(void* data, std::uint64_t) noexcept {
    std::free(data);
}

void Ops::linearForwardBf16(const Bf16*, const Bf16*, const float*, float*, std::int64_t,
                            std::int64_t, std::int64_t, bool) {
    throw Error(ErrorKind::Internal, "this device has no bf16 linear layers");
}

void Ops::linearBackwardBf16(const float*, const Bf16*, const Bf16*, const Bf16*, float*, float*,
                             float*, std::int64_t, std::int64_t, std::int64_t) {
    throw Error(ErrorKind::Internal, "this device has no bf16 linear layers");
}

} // namespace shardscope::device
