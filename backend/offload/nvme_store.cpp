#include "offload/nvme_store.h"

#include "core/error.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <mutex>
#include <signal.h>
#include <string_view>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#if SHARDSCOPE_HAVE_LIBURING
#include <liburing.h>
#endif

namespace shardscope::offload {

namespace {

[[noreturn]] void ioError(const std::string& what, const std::string& path, std::uint64_t offset,
                          int err) {
    throw Error(ErrorKind::Io, "nvme: " + what + " " + path + " at offset " +
                                   std::to_string(offset) + " failed: " + std::strerror(err));
}

// Files to remove when the process is ended by SIGTERM, SIGINT or SIGHUP (the launcher's
// teardown, Ctrl-C): no destructor runs then, and a rank's states can be gigabytes. A slot is
// free (0), being filled (1) or holds a path the handler may unlink (2).
constexpr int kSlots = 1024; // rank threads in one process (bss: untouched pages cost nothing)
constexpr std::size_t kSlotPath = 4096; // PATH_MAX
char gPaths[kSlots][kSlotPath];
std::atomic<int> gSlotState[kSlots];
constexpr int kRemoveOn[] = {SIGTERM, SIGINT, SIGHUP};
struct sigaction gPrevious[std::size(kRemoveOn)];

extern "C" void removeFilesOnSignal(int signal) {
    for (int i = 0; i < kSlots; ++i)
        if (gSlotState[i].load() == 2) ::unlink(gPaths[i]);
    // The previous disposition (usually: terminate) acts once this handler returns.
    for (std::size_t i = 0; i < std::size(kRemoveOn); ++i)
        if (kRemoveOn[i] == signal) ::sigaction(signal, &gPrevious[i], nullptr);
    ::raise(signal);
}

void installRemoveOnSignal() {
    static std::once_flag once;
    std::call_once(once, [] {
        struct sigaction action {};
        action.sa_handler = removeFilesOnSignal;
        ::sigemptyset(&action.sa_mask);
        for (std::size_t i = 0; i < std::size(kRemoveOn); ++i) {
            ::sigaction(kRemoveOn[i], nullptr, &gPrevious[i]);
            // An ignored signal (nohup) stays ignored; any other disposition (a handler someone
            // else set too: the progress record's note) acts after the files are gone.
            if (gPrevious[i].sa_handler != SIG_IGN) ::sigaction(kRemoveOn[i], &action, nullptr);
        }
    });
}

// The slot now holding `path`, or -1 (all taken, or the path too long: removed at exit only).
int registerForRemoval(const std::string& path) {
    if (path.size() >= kSlotPath) return -1;
    installRemoveOnSignal();
    for (int i = 0; i < kSlots; ++i) {
        int expected = 0;
        if (!gSlotState[i].compare_exchange_strong(expected, 1)) continue;
        std::memcpy(gPaths[i], path.c_str(), path.size() + 1);
        gSlotState[i].store(2);
        return i;
    }
    return -1;
}

} // namespace

// Note: a live rank holds an exclusive flock on its file for as long as it runs, so a file
// that can be locked has no owner left — whatever its pid says in this PID namespace (pids
// repeat across containers and hosts sharing the directory). Only this user's regular 0600
// files by that exact name are candidates, never one written in the last 3 s (its creator
// may not hold the lock yet), and a --keep-nvme file has another name.
std::vector<std::string> sweepStaleFiles(const std::string& dir) {
    std::vector<std::string> removed;
    DIR* d = ::opendir(dir.c_str());
    if (!d) return removed;
    const auto now = std::chrono::system_clock::now();
    while (const dirent* e = ::readdir(d)) {
        // shardscope-rank<R>-<pid>.nvme, every part checked: nothing else is touched.
        const std::string name = e->d_name;
        constexpr std::string_view prefix = "shardscope-rank", suffix = ".nvme";
        if (name.size() <= prefix.size() + suffix.size() ||
            name.compare(0, prefix.size(), prefix) != 0 ||
            name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
            continue;
        const std::string middle =
            name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
        const std::size_t dash = middle.find('-');
        const auto digits = [](const std::string& t) {
            return !t.empty() && t.size() <= 9 &&
                   t.find_first_not_of("0123456789") == std::string::npos;
        };
        if (dash == std::string::npos || !digits(middle.substr(0, dash)) ||
            !digits(middle.substr(dash + 1)))
            continue;
        const std::string path = dir + "/" + name;
        struct stat st {};
        if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid() ||
            (st.st_mode & 0777) != 0600)
            continue;
        const auto modified = std::chrono::system_clock::from_time_t(st.st_mtime);
        if (now - modified < std::chrono::seconds(3)) continue;
        const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0) continue;
        struct stat same {};
        const bool stale = ::fstat(fd, &same) == 0 && same.st_ino == st.st_ino &&
                           same.st_dev == st.st_dev && ::flock(fd, LOCK_EX | LOCK_NB) == 0;
        if (stale && ::unlink(path.c_str()) == 0) removed.push_back(path);
        ::close(fd);
    }
    ::closedir(d);
    return removed;
}

#if SHARDSCOPE_HAVE_LIBURING
struct NvmeStore::Ring {
    io_uring ring{};
};
bool nvmeAvailable() {
    return true;
}
#else
struct NvmeStore::Ring {};
bool nvmeAvailable() {
    return false;
}
#endif

NvmeStore::NvmeStore(const NvmeOptions& options, int rank) : options_(options) {
    if (!nvmeAvailable())
        throwInvalid("the NVMe tier needs liburing, which this build was configured without");
    if (options_.dir.empty()) throwInvalid("the NVMe tier needs a directory (--nvme-dir)");
    if (options_.blockBytes < kAlign || options_.blockBytes % kAlign != 0)
        throwInvalid("--aio-block-bytes must be a multiple of " + std::to_string(kAlign) +
                     ", got " + std::to_string(options_.blockBytes));
    if (options_.queueDepth < 1) throwInvalid("--aio-queue-depth must be at least 1");
    for (const std::string& stale : sweepStaleFiles(options_.dir))
        std::fprintf(stderr,
                     "shardscope-worker: note: removed %s, left by a process that no longer runs\n",
                     stale.c_str());
    // A kept file is named so that no later sweep takes it for a stale one.
    path_ = options_.dir + "/shardscope-rank" + std::to_string(rank) + "-" +
            std::to_string(::getpid()) + (options_.keep ? ".kept.nvme" : ".nvme");
    const int flags = O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC;
    fd_ = ::open(path_.c_str(), flags | O_DIRECT, 0600);
    if (fd_ < 0 && errno == EINVAL) { // the file system has no O_DIRECT (tmpfs): buffered
        direct_ = false;
        fd_ = ::open(path_.c_str(), flags, 0600);
        if (fd_ >= 0)
            std::fprintf(stderr,
                         "shardscope-worker: note: %s refuses O_DIRECT (tmpfs?); the NVMe tier "
                         "uses buffered I/O\n",
                         options_.dir.c_str());
    }
    if (fd_ < 0) ioError("creating", path_, 0, errno);
    ::flock(fd_, LOCK_EX | LOCK_NB); // held while the rank runs: the sweep's sign of life
#if SHARDSCOPE_HAVE_LIBURING
    ring_ = std::make_unique<Ring>();
    if (const int rc =
            io_uring_queue_init(static_cast<unsigned>(options_.queueDepth), &ring_->ring, 0);
        rc < 0) {
        ring_.reset();
        ::close(fd_);
        ::unlink(path_.c_str());
        ioError("setting up io_uring for", path_, 0, -rc);
    }
#endif
    if (!options_.keep) removalSlot_ = registerForRemoval(path_);
}

NvmeStore::~NvmeStore() {
    waitAll(); // never leave the kernel writing into freed buffers
#if SHARDSCOPE_HAVE_LIBURING
    if (ring_) io_uring_queue_exit(&ring_->ring);
#endif
    if (fd_ >= 0) ::close(fd_);
    if (!options_.keep && !path_.empty()) ::unlink(path_.c_str());
    if (removalSlot_ >= 0) gSlotState[removalSlot_].store(0);
}

std::uint64_t NvmeStore::reserve(std::uint64_t bytes) {
    const std::uint64_t at = size_;
    size_ += alignedBytes(bytes);
    return at;
}

void NvmeStore::write(std::uint64_t offset, const void* buffer, std::uint64_t bytes) {
    wait(startWrite(offset, buffer, bytes));
}

void NvmeStore::read(std::uint64_t offset, void* buffer, std::uint64_t bytes) {
    wait(startRead(offset, buffer, bytes));
}

NvmeStore::Ticket NvmeStore::startWrite(std::uint64_t offset, const void* buffer,
                                        std::uint64_t bytes) {
    return start(true, offset, static_cast<char*>(const_cast<void*>(buffer)), alignedBytes(bytes));
}

NvmeStore::Ticket NvmeStore::startRead(std::uint64_t offset, void* buffer, std::uint64_t bytes) {
    return start(false, offset, static_cast<char*>(buffer), alignedBytes(bytes));
}

NvmeStore::Ticket NvmeStore::start(bool write, std::uint64_t offset, char* buffer,
                                   std::uint64_t bytes) {
    if (offset % kAlign != 0 || reinterpret_cast<std::uintptr_t>(buffer) % kAlign != 0)
        throw Error(ErrorKind::Internal,
                    "nvme: unaligned transfer at offset " + std::to_string(offset));
    if (offset + bytes > size_)
        throw Error(ErrorKind::Internal, "nvme: transfer past the reserved regions");
    Transfer t;
    t.write = write;
    t.offset = offset;
    t.buffer = buffer;
    t.bytes = bytes;
    const Ticket ticket = nextTicket_++;
    open_.emplace_back(ticket, t);
    submit();
    return ticket;
}

void NvmeStore::fail(const Transfer& t) {
    ioError(t.write ? "writing" : "reading", path_, t.offset + t.errorAt, t.error);
}

// A block's user data: the ticket in the high 24 bits, the block's byte offset within its
// transfer in the low 40 (transfers are far below a terabyte).
namespace {
constexpr unsigned kOffsetBits = 40;
}

void NvmeStore::submit() {
#if SHARDSCOPE_HAVE_LIBURING
    io_uring& ring = ring_->ring;
    const auto depth = static_cast<unsigned>(options_.queueDepth);
    bool queued = false;
    for (auto& [ticket, t] : open_) {
        while (inflight_ < depth && t.next < t.bytes && t.error == 0) {
            io_uring_sqe* sqe = io_uring_get_sqe(&ring);
            if (!sqe) break;
            const auto len = static_cast<unsigned>(std::min(options_.blockBytes, t.bytes - t.next));
            if (t.write)
                io_uring_prep_write(sqe, fd_, t.buffer + t.next, len,
                                    static_cast<__u64>(t.offset + t.next));
            else
                io_uring_prep_read(sqe, fd_, t.buffer + t.next, len,
                                   static_cast<__u64>(t.offset + t.next));
            io_uring_sqe_set_data64(sqe, (ticket << kOffsetBits) | t.next);
            t.next += len;
            ++inflight_;
            queued = true;
        }
    }
    if (queued)
        if (const int rc = io_uring_submit(&ring); rc < 0) ioError("submitting to", path_, 0, -rc);
#endif
}

void NvmeStore::completeOne() {
#if SHARDSCOPE_HAVE_LIBURING
    io_uring& ring = ring_->ring;
    io_uring_cqe* cqe = nullptr;
    // A signal that a handler noted (Ctrl-C on a worker run directly) interrupts the wait; the
    // run ends at its step boundary, so the wait goes on.
    int rc = 0;
    while ((rc = io_uring_wait_cqe(&ring, &cqe)) == -EINTR) {
    }
    if (rc < 0) ioError("waiting on", path_, 0, -rc);
    const std::uint64_t data = io_uring_cqe_get_data64(cqe);
    const int res = cqe->res;
    io_uring_cqe_seen(&ring, cqe);
    account(data, res);
#endif
}

void NvmeStore::account([[maybe_unused]] std::uint64_t data, [[maybe_unused]] int res) {
#if SHARDSCOPE_HAVE_LIBURING
    --inflight_;
    const Ticket ticket = data >> kOffsetBits;
    const std::uint64_t at = data & ((std::uint64_t{1} << kOffsetBits) - 1);
    const auto it =
        std::find_if(open_.begin(), open_.end(), [&](const auto& o) { return o.first == ticket; });
    if (it == open_.end()) return; // a transfer abandoned by waitAll
    Transfer& t = it->second;
    const std::uint64_t want = std::min(options_.blockBytes, t.bytes - at);
    if (res < 0) {
        if (t.error == 0) t.error = -res, t.errorAt = at;
    } else if (static_cast<std::uint64_t>(res) != want && t.error == 0) {
        // Short: the rest synchronously; nothing more at all is the end of the file (cut short).
        const auto got = static_cast<std::uint64_t>(res);
        const ssize_t more = got == 0 && !t.write ? 0
                             : t.write            ? ::pwrite(fd_, t.buffer + at + got, want - got,
                                                             static_cast<off_t>(t.offset + at + got))
                                                  : ::pread(fd_, t.buffer + at + got, want - got,
                                                            static_cast<off_t>(t.offset + at + got));
        if (more < 0)
            t.error = errno, t.errorAt = at + got;
        else if (static_cast<std::uint64_t>(more) != want - got)
            t.error = t.write ? ENOSPC : EIO, t.errorAt = at + got;
    }
    t.done += want;
#endif
}

bool NvmeStore::poll(Ticket ticket) {
#if SHARDSCOPE_HAVE_LIBURING
    io_uring& ring = ring_->ring;
    io_uring_cqe* cqe = nullptr;
    while (inflight_ > 0 && io_uring_peek_cqe(&ring, &cqe) == 0 && cqe) {
        const std::uint64_t data = io_uring_cqe_get_data64(cqe);
        const int res = cqe->res;
        io_uring_cqe_seen(&ring, cqe);
        account(data, res);
    }
    submit(); // blocks that waited for room in the queue
    const auto it =
        std::find_if(open_.begin(), open_.end(), [&](const auto& o) { return o.first == ticket; });
    if (it == open_.end()) return true;
    const Transfer& t = it->second;
    return t.error != 0 ? t.done >= t.next : t.done >= t.bytes;
#else
    (void)ticket;
    return true;
#endif
}

void NvmeStore::wait(Ticket ticket) {
    const auto find = [&] {
        return std::find_if(open_.begin(), open_.end(),
                            [&](const auto& o) { return o.first == ticket; });
    };
    if (find() == open_.end())
        throw Error(ErrorKind::Internal, "nvme: waiting on an unknown transfer");
#if SHARDSCOPE_HAVE_LIBURING
    for (;;) {
        auto it = find();
        Transfer& t = it->second;
        const bool finished = t.error != 0 ? t.done >= t.next : t.done >= t.bytes;
        if (finished) {
            const Transfer copy = t;
            open_.erase(it);
            if (copy.error != 0) fail(copy);
            submit(); // room in the queue for the others
            return;
        }
        submit();
        completeOne();
    }
#else
    open_.clear();
    ioError("transferring", path_, 0, ENOSYS);
#endif
}

void NvmeStore::waitAll() noexcept {
#if SHARDSCOPE_HAVE_LIBURING
    try {
        while (inflight_ > 0)
            completeOne();
    } catch (...) {
        // Teardown: the run has failed already, or is ending.
    }
#endif
    open_.clear();
}

} // namespace shardscope::offload
