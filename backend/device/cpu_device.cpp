#include "device/cpu_device.h"

#include <cstdlib>
#include <cstring>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "core/error.h"
#include "device/cpu_ops.h"

namespace shardscope::device {

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

void CpuDevice::rawFree(void* data, std::uint64_t) noexcept {
    std::free(data);
}

void CpuDevice::rawZero(void* data, std::uint64_t bytes) {
    std::memset(data, 0, bytes);
}

void keepFreedHostMemory() {
#if defined(__GLIBC__)
    mallopt(M_MMAP_THRESHOLD, 32 << 20); // glibc's largest; fixing it also stops its adaptation
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
}

} // namespace shardscope::device
