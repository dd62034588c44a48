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
#include <utility>
#include <vector>

namespace shardscope::offload {

inline constexpr std::uint64_t kAlign = 4096;
constexpr std::uint64_t alignedBytes(std::uint64_t n) {
    return (n + kAlign - 1) / kAlign * kAlign;
}

struct NvmeOptions {
    std::string dir;                    // --nvme-dir
    bool keep = false;                  // --keep-nvme: leave the file behind
    std::uint64_t blockBytes = 1 << 20; // --aio-block-bytes
    int queueDepth = 8;                 // --aio-queue-depth
};

// Whether this build has the NVMe tier (liburing found at configure time).
bool nvmeAvailable();

// Removes the rank files in `dir` (shardscope-rank<R>-<pid>.nvme) that no running rank holds
// (a rank killed with SIGKILL runs no cleanup) and returns their paths: this user's regular
// 0600 files, unlocked, untouched for 3 s. A live rank's file (locked), a --keep-nvme file
// (shardscope-rank<R>-<pid>.kept.nvme) and anything else stay.
std::vector<std::string> sweepStaleFiles(const std::string& dir);

class NvmeStore {
public:
    // Creates DIR/shardscope-rank<R>-<pid>.nvme (exclusive), after sweeping the stale files of
    // dead processes from DIR (a note on stderr names each). Throws Error(Io) naming the path.
    NvmeStore(const NvmeOptions& options, int rank);
    ~NvmeStore(); // closes; removes the file unless options.keep (SIGTERM, SIGINT, SIGHUP remove it
                  // too)
    NvmeStore(const NvmeStore&) = delete;
    NvmeStore& operator=(const NvmeStore&) = delete;

    // A region of `bytes` (rounded up to kAlign) at the end of the file; returns its offset.
    std::uint64_t reserve(std::uint64_t bytes);
    // `bytes` rounded up to kAlign from/to `buffer` (kAlign-aligned, alignedBytes(bytes) long).
    void write(std::uint64_t offset, const void* buffer, std::uint64_t bytes);
    void read(std::uint64_t offset, void* buffer, std::uint64_t bytes);

    // Asynchronous: the transfer is started (its first blocks submitted) and runs while the caller
    // computes; wait(ticket) returns when it is complete. Transfers share the queue depth. The
    // buffer must stay alive and untouched (a read) or unchanged (a write) until then. An error
    // is thrown by the wait that meets it, after every block in flight has completed.
    using Ticket = std::uint64_t;
    Ticket startWrite(std::uint64_t offset, const void* buffer, std::uint64_t bytes);
    Ticket startRead(std::uint64_t offset, void* buffer, std::uint64_t bytes);
    void wait(Ticket ticket);
    // Without blocking: takes the completions the kernel has already posted and answers whether
    // `ticket` is complete (then wait returns at once). Lets a caller see a transfer end while
    // it computes, not only when it next needs the data.
    bool poll(Ticket ticket);
    void waitAll() noexcept; // for teardown: completes everything, errors ignored

    const std::string& path() const { return path_; }
    bool direct() const { return direct_; }
    std::uint64_t size() const { return size_; }

private:
    struct Transfer {
        bool write = false;
        std::uint64_t offset = 0;
        char* buffer = nullptr;
        std::uint64_t bytes = 0;
        std::uint64_t next = 0; // bytes handed to the kernel
        std::uint64_t done = 0; // bytes completed
        int error = 0;          // errno of the first failure
        std::uint64_t errorAt = 0;
    };
    Ticket start(bool write, std::uint64_t offset, char* buffer, std::uint64_t bytes);
    void submit();      // hands blocks of the open transfers to the kernel, up to the queue depth
    void completeOne(); // waits for one block and accounts it to its transfer
    void account(std::uint64_t data, int res); // one completed block
    void fail(const Transfer& t);

    struct Ring;
    NvmeOptions options_;
    std::string path_;
    int fd_ = -1;
    int removalSlot_ = -1; // where the signal handler finds path_ (see nvme_store.cpp)
    bool direct_ = true;
    std::uint64_t size_ = 0;
    std::unique_ptr<Ring> ring_;
    std::vector<std::pair<Ticket, Transfer>> open_; // in start order
    Ticket nextTicket_ = 1;
    unsigned inflight_ = 0;
};

} // namespace shardscope::offload
