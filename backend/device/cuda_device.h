#pragma once
// One rank's GPU memory. Every Buffer comes from this rank's own stream-ordered memory pool
// (cudaMemPoolCreate + cudaMallocFromPoolAsync on the rank's stream), so:
//  - the ledger (Device::allocate, every byte tagged with its category) is what the model asked
//    for, and
//  - the pool's counters are what the GPU gave: reserved and used bytes with high-water marks,
//    per rank even when several ranks share one GPU (--shared-device: one pool per rank).
// measure() reports both next to cudaMemGetInfo, and the bytes used on the device outside every
// ShardScope pool — CUDA context, cuBLAS workspaces, NCCL's buffers, other processes — as a
// figure of its own ("outside the ledger"), never folded into the ledger's numbers.
//
// Note: frees are stream-ordered (cudaFreeAsync on the rank's stream): a Buffer may be released
// while kernels that use it are still queued on that stream. Work on OTHER streams that uses a
// buffer must be ordered before its free with events (the communicators do this).
// The pool keeps what it reserved (release threshold = max), as PyTorch's caching allocator
// does, so steady-state steps allocate nothing from the driver and "reserved" is the footprint.
#include "device/device.h"

#include <cstdint>
#include <memory>
#include <string>

struct CUstream_st;        // cudaStream_t
struct CUmemPoolHandle_st; // cudaMemPool_t

namespace shardscope::device {

class CudaOps;

struct CudaMemoryReport {
    int ordinal = 0;
    std::uint64_t ledgerLive = 0, ledgerPeak = 0; // the ledger's device tier
    std::uint64_t poolUsed = 0, poolUsedHigh = 0; // this rank's pool
    std::uint64_t poolReserved = 0, poolReservedHigh = 0;
    std::uint64_t allPoolsReserved = 0;            // every ShardScope pool on this GPU
    std::uint64_t deviceTotal = 0, deviceFree = 0; // cudaMemGetInfo (whole GPU)
    // This rank's declared workspaces (CudaOps::declaredWorkspaceBytes: the bf16 cast buffer,
    // the reduction scratch, cuBLAS's workspace): plain cudaMalloc outside every pool, so they
    // are part of outsideLedger(); 0 before ops() was first used.
    std::uint64_t declaredWorkspace = 0;
    std::uint64_t deviceUsed() const { return deviceTotal - deviceFree; }
    // Device memory in use that no ShardScope pool holds (context, libraries, other processes).
    std::uint64_t outsideLedger() const {
        return deviceUsed() > allPoolsReserved ? deviceUsed() - allPoolsReserved : 0;
    }
};

class CudaDevice final : public Device {
public:
    // Makes `ordinal` current on the calling thread, creates the rank's stream and pool. Throws
    // Error(InvalidArgument) naming the reason when there is no such device.
    CudaDevice(Ledger& ledger, int ordinal);
    ~CudaDevice() override; // every Buffer of this device must be gone first (as for CpuDevice)

    DeviceKind kind() const override { return DeviceKind::Cuda; }
    std::string name() const override { return name_; } // "cuda:0 (NVIDIA H200)"
    int ordinal() const { return ordinal_; }
    CUstream_st* stream() const { return stream_; } // the rank's compute stream
    // CudaOps (device/cuda_ops.h) on this device's stream, made on first use: call it from the
    // thread that owns the device (cuBLAS handles are per thread).
    Ops& ops() override;
    // Device memory this rank's CudaOps holds outside the pool and the ledger, by its own
    // declaration (CudaOps::declaredWorkspaceBytes); 0 before ops() was first used.
    std::uint64_t declaredWorkspaceBytes() const;

    // Waits for the rank's stream (makes stream-ordered frees visible in the pool's counters).
    void synchronize();
    // Synchronizes, then reads the ledger, the pool and the device.
    CudaMemoryReport measure();
    // Starts a new high-water window for the pool (the ledger has its own resetPeaks).
    void resetPoolPeaks();

protected:
    void* rawAllocate(std::uint64_t bytes) override;
    void rawFree(void* data, std::uint64_t bytes) noexcept override;
    void rawZero(void* data, std::uint64_t bytes) override;
    // Pinned (cudaHostAlloc): copies between it and the device run asynchronously on the stream.
    void* rawAllocateHost(std::uint64_t bytes) override;
    void rawFreeHost(void* data, std::uint64_t bytes) noexcept override;

private:
    int ordinal_ = 0;
    std::string name_;
    CUstream_st* stream_ = nullptr;
    CUmemPoolHandle_st* pool_ = nullptr;
    std::unique_ptr<CudaOps> ops_; // destroyed first in ~CudaDevice: it uses the stream
};

} // namespace shardscope::device
