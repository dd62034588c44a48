#pragma once
// Where every buffer of a run comes from. A Device allocates memory of its kind and tags each
// allocation with a ledger category, tier and unit, so the Ledger is a true picture of the
// process, and offers the arithmetic on that memory through ops() (device/ops.h): CpuDevice
// (device/cpu_device.h), CudaDevice (device/cuda_device.h), and CountingDevice
// (device/counting_device.h), which keeps the ledger of a dry run without any memory.
//
// Note: Buffer is move-only and frees itself (RAII), so a free can never be forgotten and the
// ledger's live bytes return to the model states at the end of every step.
#include "core/categories.h"
#include "core/event.h"
#include "core/ledger.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>

namespace shardscope::device {

enum class DeviceKind : std::uint8_t { Cpu, Cuda };

struct AllocTag {
    Category category = Category::Workspace;
    Tier tier = Tier::Device;
    std::int32_t unit = kNoUnit;
};

class Device;
class Ops;

class Buffer {
public:
    Buffer() = default;
    ~Buffer() { reset(); }
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;
    Buffer(Buffer&& o) noexcept { *this = std::move(o); }
    Buffer& operator=(Buffer&& o) noexcept;

    void reset() noexcept; // frees now (the ledger records it); idempotent
    bool empty() const { return data_ == nullptr; }
    std::uint64_t bytes() const { return bytes_; }
    const AllocTag& tag() const { return tag_; }
    void* data() const { return data_; }

    // Typed views; the byte size must be a multiple of sizeof(T).
    template <class T> std::span<T> as() const {
        return {static_cast<T*>(data_), static_cast<std::size_t>(bytes_ / sizeof(T))};
    }
    template <class T> T* ptr() const { return static_cast<T*>(data_); }

private:
    friend class Device;
    Buffer(Device* device, void* data, std::uint64_t bytes, AllocTag tag)
        : device_(device), data_(data), bytes_(bytes), tag_(tag) {}

    Device* device_ = nullptr;
    void* data_ = nullptr;
    std::uint64_t bytes_ = 0;
    AllocTag tag_{};
};

class Device {
public:
    explicit Device(Ledger& ledger) : ledger_(ledger) {}
    virtual ~Device() = default;
    Device(const Device&) = delete;
    Device& operator=(const Device&) = delete;

    virtual DeviceKind kind() const = 0;
    virtual std::string name() const = 0;
    // The compute and copy operations on this device's memory (one object per device, used
    // from the thread that owns the device).
    virtual Ops& ops() = 0;
    // False for a device that only keeps the ledger (CountingDevice): its buffers have
    // addresses but no memory, so host code must not fill or read them, only call ops().
    virtual bool holdsData() const { return true; }

    // Records the allocation in the ledger first (which enforces the capacity budget and throws
    // Error(OutOfMemory) naming category/unit/bytes), then allocates. zeroed = filled with 0.
    // A zero-byte request yields an empty Buffer and no ledger entry. Tier::Host buffers come
    // from the host allocator (host code reads and writes them directly, when holdsData());
    // Tier::Nvme bytes are files, never a Buffer (offload/nvme_store.h).
    Buffer allocate(std::uint64_t bytes, AllocTag tag, bool zeroed = false);
    template <class T>
    Buffer allocateArray(std::uint64_t count, AllocTag tag, bool zeroed = false) {
        return allocate(count * sizeof(T), tag, zeroed);
    }

    Ledger& ledger() { return ledger_; }
    const Ledger& ledger() const { return ledger_; }

    // ops().upload / download of offloaded state during training, recorded as a transfer span
    // (core/event.h: TransferBegin/End, host → device / device → host, bytes, unit). The span
    // starts after the device's queued work, so it is the copy's own time.
    void recordedUpload(void* dst, const void* host, std::uint64_t bytes, std::int32_t unit);
    void recordedDownload(void* host, const void* src, std::uint64_t bytes, std::int32_t unit);

protected:
    virtual void* rawAllocate(std::uint64_t bytes) = 0; // throws Error(OutOfMemory) on failure
    virtual void rawFree(void* data, std::uint64_t bytes) noexcept = 0;
    virtual void rawZero(void* data, std::uint64_t bytes) = 0;
    // Host-tier memory (offloaded states and their staging buffers): its own allocator, so that
    // a device budget (--capacity) never counts it. Page-aligned host memory here; pinned
    // (cudaHostAlloc) on the CUDA device, so copies to and from it can be asynchronous.
    virtual void* rawAllocateHost(std::uint64_t bytes);
    virtual void rawFreeHost(void* data, std::uint64_t bytes) noexcept;

private:
    friend class Buffer;
    void release(void* data, std::uint64_t bytes, const AllocTag& tag) noexcept;
    Ledger& ledger_;
};

} // namespace shardscope::device
