#include "device/device.h"

#include "core/error.h"

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

} // namespace shardscope::device
