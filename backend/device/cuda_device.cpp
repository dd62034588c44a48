#include "device/cuda_device.h"

#include "core/error.h"
#include "device/cuda_ops.h"
#include "kernels/cuda/cuda_check.h"
#include "platform/cuda_probe.h"

#include <algorithm>
#include <cstdint>
#include <cuda_runtime_api.h>
#include <mutex>
#include <vector>

namespace shardscope::device {

namespace {

// Every live pool per GPU, so a rank can tell its device's memory outside ALL ShardScope pools
// (in shared-device mode the other ranks' pools are on the same GPU).
struct PoolRegistry {
    std::mutex mutex;
    std::vector<std::pair<int, cudaMemPool_t>> pools;
};
PoolRegistry& registry() {
    static PoolRegistry r;
    return r;
}

std::uint64_t poolAttribute(cudaMemPool_t pool, cudaMemPoolAttr attr) {
    std::uint64_t v = 0; // the cudaMemPoolAttr*Mem* attributes are cuuint64_t
    CUDA_CHECK(cudaMemPoolGetAttribute(pool, attr, &v));
    return v;
}

} // namespace

CudaDevice::CudaDevice(Ledger& ledger, int ordinal) : Device(ledger), ordinal_(ordinal) {
    const platform::CudaAvailability cuda = platform::probeCuda();
    if (!cuda.available) throwInvalid("--backend cuda: " + cuda.reason);
    if (ordinal < 0 || ordinal >= cuda.deviceCount)
        throwInvalid("CUDA device " + std::to_string(ordinal) +
                     " does not exist (this machine has " + std::to_string(cuda.deviceCount) + ")");
    CUDA_CHECK(cudaSetDevice(ordinal));
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDeviceProperties(&prop, ordinal));
    name_ = "cuda:" + std::to_string(ordinal) + " (" + prop.name + ")";
    if (!prop.memoryPoolsSupported)
        throwInvalid(name_ + " does not support stream-ordered memory pools");

    cudaStream_t stream = nullptr;
    // Non-blocking: the rank's stream never serialises with the legacy default stream.
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    stream_ = stream;
    try {
        cudaMemPoolProps props{};
        props.allocType = cudaMemAllocationTypePinned;
        props.handleTypes = cudaMemHandleTypeNone;
        props.location.type = cudaMemLocationTypeDevice;
        props.location.id = ordinal;
        cudaMemPool_t pool = nullptr;
        CUDA_CHECK(cudaMemPoolCreate(&pool, &props));
        pool_ = pool;
        std::uint64_t keepAll = UINT64_MAX;
        CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keepAll));
    } catch (...) {
        if (pool_) cudaMemPoolDestroy(pool_);
        cudaStreamDestroy(stream_);
        throw;
    }
    std::lock_guard lock(registry().mutex);
    registry().pools.emplace_back(ordinal_, pool_);
}

CudaDevice::~CudaDevice() {
    ops_.reset(); // its cuBLAS handle and scratch are bound to the stream destroyed below
    {
        std::lock_guard lock(registry().mutex);
        auto& pools = registry().pools;
        pools.erase(std::remove(pools.begin(), pools.end(), std::make_pair(ordinal_, pool_)),
                    pools.end());
    }
    // Destructors cannot report errors; a failing sync here means the context is already gone.
    cudaStreamSynchronize(stream_);
    cudaMemPoolDestroy(pool_);
    cudaStreamDestroy(stream_);
}

void* CudaDevice::rawAllocate(std::uint64_t bytes) {
    void* p = nullptr;
    const cudaError_t rc = cudaMallocFromPoolAsync(&p, bytes, pool_, stream_);
    if (rc == cudaErrorMemoryAllocation) {
        cudaGetLastError(); // clear the (non-sticky) error so the next call does not see it
        std::size_t freeBytes = 0, totalBytes = 0;
        cudaMemGetInfo(&freeBytes, &totalBytes);
        throw Error(ErrorKind::OutOfMemory, name_ + ": the GPU refused " + std::to_string(bytes) +
                                                " bytes (" + std::to_string(freeBytes) + " of " +
                                                std::to_string(totalBytes) + " bytes free)");
    }
    CUDA_CHECK(rc);
    return p;
}

void CudaDevice::rawFree(void* data, std::uint64_t) noexcept {
    // noexcept by contract (Buffers free in destructors); an error here means the context is
    // being torn down, and the memory goes with it.
    cudaFreeAsync(data, stream_);
}

void CudaDevice::rawZero(void* data, std::uint64_t bytes) {
    CUDA_CHECK(cudaMemsetAsync(data, 0, bytes, stream_));
}

void* CudaDevice::rawAllocateHost(std::uint64_t bytes) {
    void* p = nullptr;
    const cudaError_t rc = cudaHostAlloc(&p, bytes, cudaHostAllocDefault);
    if (rc == cudaErrorMemoryAllocation) {
        cudaGetLastError();
        throw Error(ErrorKind::OutOfMemory,
                    name_ + ": the host refused " + std::to_string(bytes) + " pinned bytes");
    }
    CUDA_CHECK(rc);
    return p;
}

void CudaDevice::rawFreeHost(void* data, std::uint64_t) noexcept {
    // A copy on the stream may still read or write it.
    cudaStreamSynchronize(stream_);
    cudaFreeHost(data);
}

Ops& CudaDevice::ops() {
    if (!ops_) ops_ = std::make_unique<CudaOps>(*this);
    return *ops_;
}

std::uint64_t CudaDevice::declaredWorkspaceBytes() const {
    return ops_ ? ops_->declaredWorkspaceBytes() : 0;
}

void CudaDevice::synchronize() {
    CUDA_CHECK(cudaStreamSynchronize(stream_));
}

CudaMemoryReport CudaDevice::measure() {
    synchronize();
    CudaMemoryReport r;
    r.ordinal = ordinal_;
    r.ledgerLive = ledger().liveTierBytes(Tier::Device);
    r.ledgerPeak = ledger().peakTierBytes(Tier::Device);
    r.poolUsed = poolAttribute(pool_, cudaMemPoolAttrUsedMemCurrent);
    r.poolUsedHigh = poolAttribute(pool_, cudaMemPoolAttrUsedMemHigh);
    r.poolReserved = poolAttribute(pool_, cudaMemPoolAttrReservedMemCurrent);
    r.poolReservedHigh = poolAttribute(pool_, cudaMemPoolAttrReservedMemHigh);
    {
        std::lock_guard lock(registry().mutex);
        for (const auto& [ordinal, pool] : registry().pools)
            if (ordinal == ordinal_)
                r.allPoolsReserved += poolAttribute(pool, cudaMemPoolAttrReservedMemCurrent);
    }
    std::size_t freeBytes = 0, totalBytes = 0;
    CUDA_CHECK(cudaSetDevice(ordinal_)); // cudaMemGetInfo reports the calling thread's device
    CUDA_CHECK(cudaMemGetInfo(&freeBytes, &totalBytes));
    r.deviceFree = freeBytes;
    r.deviceTotal = totalBytes;
    r.declaredWorkspace = declaredWorkspaceBytes();
    return r;
}

void CudaDevice::resetPoolPeaks() {
    // Only zero is accepted for the high-water attributes; it restarts them from the current value.
    std::uint64_t zero = 0;
    CUDA_CHECK(cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrUsedMemHigh, &zero));
    CUDA_CHECK(cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReservedMemHigh, &zero));
}

} // namespace shardscope::device
