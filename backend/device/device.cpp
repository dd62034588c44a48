#include "device/device.h"

#include <cstdlib>
#include <cstring>
#include <new>

#include "core/error.h"
#include "device/cpu_ops.h"

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
    ledger_.recordAlloc(tag.category, tag.tier, bytes, tag.unit);
    void* data = nullptr;
    try {
        data = rawAllocate(bytes);
    } catch (...) {
        ledger_.recordFree(tag.category, tag.tier, bytes, tag.unit);
        throw;
    }
    Buffer buffer(this, data, bytes, tag); // from here on a throw frees it and its ledger entry
    if (zeroed) rawZero(data, bytes);
    return buffer;
}

void Device::release(void* data, std::uint64_t bytes, const AllocTag& tag) noexcept {
    rawFree(data, bytes);
    ledger_.recordFree(tag.category, tag.tier, bytes, tag.unit);
}

namespace {
constexpr std::uint64_t kAlignBytes = 64;
}

CpuDevice::CpuDevice(Ledger& ledger) : Device(ledger), ops_(std::make_unique<CpuOps>()) {}
CpuDevice::~CpuDevice() = default;

void* CpuDevice::rawAllocate(std::uint64_t bytes) {
    // aligned_alloc needs a size that is a multiple of the alignment; the ledger keeps the
    // requested size (the rounding is allocator overhead, not model memory).
    const std::uint64_t rounded = (bytes + kAlignBytes - 1) / kAlignBytes * kAlignBytes;
    void* p = std::aligned_alloc(kAlignBytes, rounded);
    if (!p)
        throw Error(ErrorKind::OutOfMemory,
                    "cpu: the system refused " + std::to_string(bytes) + " bytes");
    return p;
}

void CpuDevice::rawFree(void* data, std::uint64_t) noexcept { std::free(data); }

void CpuDevice::rawZero(void* data, std::uint64_t bytes) { std::memset(data, 0, bytes); }

} // namespace shardscope::device
