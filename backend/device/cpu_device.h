#pragma once
// The CPU rank's device: host memory and CpuOps (device/cpu_ops.h) over kernels/cpu. Its own
// library (device_cpu), so that naming a Device does not link the CPU kernels or OpenBLAS.
#include "device/device.h"

#include <memory>
#include <string>

namespace shardscope::device {

// Host memory, 64-byte aligned (cache line / AVX-512), counted as tier `device` because on a
// CPU rank the host *is* the compute device; host-tier buffers (offload) pass Tier::Host.
class CpuDevice final : public Device {
public:
    explicit CpuDevice(Ledger& ledger);
    ~CpuDevice() override;
    DeviceKind kind() const override { return DeviceKind::Cpu; }
    std::string name() const override { return "cpu"; }
    Ops& ops() override { return *ops_; }

protected:
    void* rawAllocate(std::uint64_t bytes) override;
    void rawFree(void* data, std::uint64_t bytes) noexcept override;
    void rawZero(void* data, std::uint64_t bytes) override;

private:
    std::unique_ptr<Ops> ops_;
};

// Keeps freed host memory in the process (glibc: no mmap of its own for buffers up to 32 MiB,
// no trimming of the heap), so a step's per-unit workspaces and activations reuse pages instead
// of faulting in fresh zeroed ones every step (about a fifth of a small model's CPU step).
// Resident memory then stays at the step's peak, which the ledger reports anyway. Process-wide
// policy: called by the worker's main and the CPU benchmarks, never by the library itself.
void keepFreedHostMemory();

} // namespace shardscope::device
