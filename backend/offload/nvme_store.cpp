#include "offload/nvme_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/error.h"

#if SHARDSCOPE_HAVE_LIBURING
#include <liburing.h>
#endif

namespace shardscope::offload {

namespace {

[[noreturn]] void ioError(const std::string& what, const std::string& path, std::uint64_t offset, int err) {
    throw Error(ErrorKind::Io, "nvme: " + what + " " + path + " at offset " + std::to_string(offset) + " failed: " +
                                   std::strerror(err));
}

} // namespace

#if SHARDSCOPE_HAVE_LIBURING
struct NvmeStore::Ring {
    io_uring ring{};
};
bool nvmeAvailable() { return true; }
#else
struct NvmeStore::Ring {};
bool nvmeAvailable() { return false; }
#endif

NvmeStore::NvmeStore(const NvmeOptions& options, int rank) : options_(options) {
    if (!nvmeAvailable()) throwInvalid("the NVMe tier needs liburing, which this build was configured without");
    if (options_.dir.empty()) throwInvalid("the NVMe tier needs a directory (--nvme-dir)");
    if (options_.blockBytes < kAlign || options_.blockBytes % kAlign != 0)
        throwInvalid("--aio-block-bytes must be a multiple of " + std::to_string(kAlign) + ", got " +
                     std::to_string(options_.blockBytes));
    if (options_.queueDepth < 1) throwInvalid("--aio-queue-depth must be at least 1");
    path_ = options_.dir + "/shardscope-rank" + std::to_string(rank) + "-" + std::to_string(::getpid()) + ".nvme";
    const int flags = O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC;
    fd_ = ::open(path_.c_str(), flags | O_DIRECT, 0600);
    if (fd_ < 0 && errno == EINVAL) { // the file system has no O_DIRECT (tmpfs): buffered
        direct_ = false;
        fd_ = ::open(path_.c_str(), flags, 0600);
        if (fd_ >= 0)
            std::fprintf(stderr, "shardscope-worker: note: %s refuses O_DIRECT (tmpfs?); the NVMe tier uses buffered I/O\n",
                         options_.dir.c_str());
    }
    if (fd_ < 0) ioError("creating", path_, 0, errno);
#if SHARDSCOPE_HAVE_LIBURING
    ring_ = std::make_unique<Ring>();
    if (const int rc = io_uring_queue_init(static_cast<unsigned>(options_.queueDepth), &ring_->ring, 0); rc < 0) {
        ring_.reset();
        ::close(fd_);
        ::unlink(path_.c_str());
        ioError("setting up io_uring for", path_, 0, -rc);
    }
#endif
}

NvmeStore::~NvmeStore() {
#if SHARDSCOPE_HAVE_LIBURING
    if (ring_) io_uring_queue_exit(&ring_->ring);
#endif
    if (fd_ >= 0) ::close(fd_);
    if (!options_.keep && !path_.empty()) ::unlink(path_.c_str());
}

std::uint64_t NvmeStore::reserve(std::uint64_t bytes) {
    const std::uint64_t at = size_;
    size_ += alignedBytes(bytes);
    return at;
}

void NvmeStore::write(std::uint64_t offset, const void* buffer, std::uint64_t bytes) {
    transfer(true, offset, static_cast<char*>(const_cast<void*>(buffer)), alignedBytes(bytes));
}

void NvmeStore::read(std::uint64_t offset, void* buffer, std::uint64_t bytes) {
    transfer(false, offset, static_cast<char*>(buffer), alignedBytes(bytes));
}

// Blocks of blockBytes, up to queueDepth in flight; a short transfer is resubmitted for the rest.
void NvmeStore::transfer(bool write, std::uint64_t offset, char* buffer, std::uint64_t bytes) {
    const char* what = write ? "writing" : "reading";
    if (offset % kAlign != 0 || reinterpret_cast<std::uintptr_t>(buffer) % kAlign != 0)
        throw Error(ErrorKind::Internal, "nvme: unaligned transfer at offset " + std::to_string(offset));
    if (offset + bytes > size_) throw Error(ErrorKind::Internal, "nvme: transfer past the reserved regions");
#if SHARDSCOPE_HAVE_LIBURING
    io_uring& ring = ring_->ring;
    std::uint64_t next = 0;   // bytes handed to the kernel
    std::uint64_t done = 0;   // bytes completed
    unsigned inflight = 0;
    const auto depth = static_cast<unsigned>(options_.queueDepth);
    while (done < bytes) {
        while (inflight < depth && next < bytes) {
            io_uring_sqe* sqe = io_uring_get_sqe(&ring);
            if (!sqe) break;
            const auto len = static_cast<unsigned>(std::min(options_.blockBytes, bytes - next));
            if (write) io_uring_prep_write(sqe, fd_, buffer + next, len, static_cast<__u64>(offset + next));
            else io_uring_prep_read(sqe, fd_, buffer + next, len, static_cast<__u64>(offset + next));
            io_uring_sqe_set_data64(sqe, next);
            next += len;
            ++inflight;
        }
        if (const int rc = io_uring_submit(&ring); rc < 0) ioError(what, path_, offset + done, -rc);
        io_uring_cqe* cqe = nullptr;
        if (const int rc = io_uring_wait_cqe(&ring, &cqe); rc < 0) ioError(what, path_, offset + done, -rc);
        const std::uint64_t at = io_uring_cqe_get_data64(cqe);
        const int res = cqe->res;
        io_uring_cqe_seen(&ring, cqe);
        --inflight;
        const std::uint64_t want = std::min(options_.blockBytes, bytes - at);
        if (res < 0) {
            while (inflight > 0 && io_uring_wait_cqe(&ring, &cqe) == 0) { // drain before throwing
                io_uring_cqe_seen(&ring, cqe);
                --inflight;
            }
            ioError(what, path_, offset + at, -res);
        }
        if (static_cast<std::uint64_t>(res) != want) { // short: the rest synchronously, or end of file
            const std::uint64_t got = static_cast<std::uint64_t>(res);
            if (!write && got == 0) ioError(what, path_, offset + at, EIO);
            const ssize_t more = write ? ::pwrite(fd_, buffer + at + got, want - got, static_cast<off_t>(offset + at + got))
                                       : ::pread(fd_, buffer + at + got, want - got, static_cast<off_t>(offset + at + got));
            if (more < 0) ioError(what, path_, offset + at + got, errno);
            if (static_cast<std::uint64_t>(more) != want - got) ioError(what, path_, offset + at + got, write ? ENOSPC : EIO);
        }
        done += want;
    }
#else
    (void)buffer;
    ioError(what, path_, offset, ENOSYS);
#endif
}

} // namespace shardscope::offload
