#pragma once
// The NVMe tier of one rank (ZeRO-Infinity): a file under --nvme-dir holding offloaded states,
// read and written with O_DIRECT in aligned blocks through io_uring (liburing), up to
// `queueDepth` blocks of `blockBytes` in flight (DeepSpeed's aio block_size / queue_depth).
//
// Note: O_DIRECT needs the buffer, the file offset and the length aligned to the device's
// logical block; regions are laid out on kAlign boundaries and every transfer is rounded up to
// kAlign, so callers pass page-aligned buffers (the host allocator's) of alignedBytes(n). Where
// the file system refuses O_DIRECT (tmpfs) the file is opened buffered and direct() is false
// (the caller prints a note). Every failure is Error(Io) naming the file and the offset.
#include <cstdint>
#include <memory>
#include <string>

namespace shardscope::offload {

inline constexpr std::uint64_t kAlign = 4096;
constexpr std::uint64_t alignedBytes(std::uint64_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

struct NvmeOptions {
    std::string dir;                    // --nvme-dir
    bool keep = false;                  // --keep-nvme: leave the file behind
    std::uint64_t blockBytes = 1 << 20; // --aio-block-bytes
    int queueDepth = 8;                 // --aio-queue-depth
};

// Whether this build has the NVMe tier (liburing found at configure time).
bool nvmeAvailable();

class NvmeStore {
public:
    // Creates DIR/shardscope-rank<R>-<pid>.nvme (exclusive). Throws Error(Io) naming the path.
    NvmeStore(const NvmeOptions& options, int rank);
    ~NvmeStore(); // closes; removes the file unless options.keep
    NvmeStore(const NvmeStore&) = delete;
    NvmeStore& operator=(const NvmeStore&) = delete;

    // A region of `bytes` (rounded up to kAlign) at the end of the file; returns its offset.
    std::uint64_t reserve(std::uint64_t bytes);
    // `bytes` rounded up to kAlign from/to `buffer` (kAlign-aligned, alignedBytes(bytes) long).
    void write(std::uint64_t offset, const void* buffer, std::uint64_t bytes);
    void read(std::uint64_t offset, void* buffer, std::uint64_t bytes);

    const std::string& path() const { return path_; }
    bool direct() const { return direct_; }
    std::uint64_t size() const { return size_; }

private:
    void transfer(bool write, std::uint64_t offset, char* buffer, std::uint64_t bytes);

    struct Ring;
    NvmeOptions options_;
    std::string path_;
    int fd_ = -1;
    bool direct_ = true;
    std::uint64_t size_ = 0;
    std::unique_ptr<Ring> ring_;
};

} // namespace shardscope::offload
