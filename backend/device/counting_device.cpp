#include "device/counting_device.h"

#include "device/ops.h"

#include <cstring>

namespace shardscope::device {

namespace {

class CountingOps final : public Ops {
public:
    void copy(void*, const void*, std::uint64_t) override {}
    void upload(void*, const void*, std::uint64_t) override {}
    void download(void* host, const void*, std::uint64_t bytes) override {
        std::memset(host, 0, bytes);
    }
    void zero(void*, std::uint64_t) override {}
    void synchronize() override {}

    void toBf16(const float*, Bf16*, std::uint64_t) override {}
    void toFloat(const Bf16*, float*, std::uint64_t) override {}
    void accumulate(void*, const void*, std::uint64_t, bool) override {}
    void accumulateRounded(Bf16*, const float*, std::uint64_t) override {}

    void embeddingForward(const std::int32_t*, const float*, const float*, float*, std::int64_t,
                          std::int64_t, std::int64_t, std::int64_t) override {}
    void embeddingBackward(const std::int32_t*, const float*, float*, float*, std::int64_t,
                           std::int64_t, std::int64_t, std::int64_t) override {}
    void layerNormForward(const float*, const float*, const float*, float*, float*, float*,
                          std::int64_t, std::int64_t) override {}
    void layerNormBackward(const float*, const float*, const float*, const float*, const float*,
                           float*, float*, float*, std::int64_t, std::int64_t) override {}
    void linearForward(const float*, const float*, const float*, float*, std::int64_t, std::int64_t,
                       std::int64_t, bool) override {}
    void linearBackward(const float*, const float*, const float*, float*, float*, float*,
                        std::int64_t, std::int64_t, std::int64_t) override {}
    void linearForwardBf16(const Bf16*, const Bf16*, const float*, float*, std::int64_t,
                           std::int64_t, std::int64_t, bool) override {}
    void linearBackwardBf16(const float*, const Bf16*, const Bf16*, const Bf16*, float*, float*,
                            float*, std::int64_t, std::int64_t, std::int64_t) override {}
    void attentionForward(const float*, float*, float*, std::int64_t, std::int64_t, std::int64_t,
                          std::int64_t) override {}
    void attentionBackward(const float*, const float*, const float*, float*, float*, std::int64_t,
                           std::int64_t, std::int64_t, std::int64_t) override {}
    void geluForward(const float*, float*, std::int64_t) override {}
    void geluBackward(const float*, const float*, float*, std::int64_t) override {}
    void add(const float*, const float*, float*, std::int64_t) override {}
    double crossEntropyForward(float*, const std::int32_t*, double*, std::int64_t,
                               std::int64_t) override {
        return 0.0;
    }
    void crossEntropyBackward(const float*, const std::int32_t*, float*, std::int64_t, std::int64_t,
                              float) override {}

    void adamw(const AdamWScalars&, float*, const void*, bool, float*, float*,
               std::uint64_t) override {}
    GradientStats gradientStats(const void*, std::uint64_t, bool) override { return {}; }
    Uint128Parts sumSquaresFixed(const void*, std::uint64_t, bool, int) override { return {}; }
};

// Fake addresses start well above null and advance by the rounded size, so every live buffer
// has its own range; nothing is ever mapped there.
constexpr std::uintptr_t kFirstAddress = std::uintptr_t{1} << 40;
constexpr std::uint64_t kAlignBytes = 64;

} // namespace

CountingDevice::CountingDevice(Ledger& ledger, DeviceKind imitates)
    : Device(ledger), kind_(imitates), ops_(std::make_unique<CountingOps>()), next_(kFirstAddress) {
}
CountingDevice::~CountingDevice() = default;

void* CountingDevice::rawAllocate(std::uint64_t bytes) {
    const std::uintptr_t at = next_;
    next_ += static_cast<std::uintptr_t>((bytes + kAlignBytes - 1) / kAlignBytes * kAlignBytes);
    return reinterpret_cast<void*>(at); // NOLINT: an address, never dereferenced
}

void CountingDevice::rawFree(void*, std::uint64_t) noexcept {}

void CountingDevice::rawZero(void*, std::uint64_t) {}

} // namespace shardscope::device
