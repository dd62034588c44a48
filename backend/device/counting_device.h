#pragma once
// A device that keeps the ledger and nothing else: every allocation and free is tagged and
// counted exactly as on a real device (Device::allocate and Buffer are the same code), but no
// memory is allocated and every operation is a no-op. Running the real step driver and strategy
// on it (a dry run, predict/) yields the ledger's peak of a real step at any scale, in the time
// it takes to walk the units.
//
// Note: buffers get distinct, non-null fake addresses (never dereferenced), so code that tests a
// Buffer for emptiness or compares two buffers behaves as on a real device. holdsData() is
// false: host code that would fill or read buffer memory directly skips it. Ops that return a
// host value return zeros (loss 0, finite gradients of norm 0); download() zero-fills its target.
#include "device/device.h"

#include <cstdint>
#include <memory>
#include <string>

namespace shardscope::device {

class CountingDevice final : public Device {
public:
    // `imitates`: the kind of device whose ledger this one keeps (what kind() answers).
    explicit CountingDevice(Ledger& ledger, DeviceKind imitates = DeviceKind::Cpu);
    ~CountingDevice() override;
    DeviceKind kind() const override { return kind_; }
    std::string name() const override { return "counting"; }
    Ops& ops() override { return *ops_; }
    bool holdsData() const override { return false; }

protected:
    void* rawAllocate(std::uint64_t bytes) override;
    void rawFree(void* data, std::uint64_t bytes) noexcept override;
    void rawZero(void* data, std::uint64_t bytes) override;
    void* rawAllocateHost(std::uint64_t bytes) override { return rawAllocate(bytes); }
    void rawFreeHost(void* data, std::uint64_t bytes) noexcept override { rawFree(data, bytes); }

private:
    DeviceKind kind_;
    std::unique_ptr<Ops> ops_;
    std::uintptr_t next_; // the next fake address
};

} // namespace shardscope::device
