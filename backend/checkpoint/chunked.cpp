#include "checkpoint/chunked.h"

#include "checkpoint/fs_util.h"
#include "checkpoint/sha256.h"
#include "checkpoint/store.h"
#include "core/error.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <climits>
#include <condition_variable>
#include <fcntl.h>
#include <memory>
#include <mutex>
#include <string_view>
#include <sys/uio.h>
#include <thread>
#include <unistd.h>

namespace shardscope::checkpoint::detail {

namespace {

// One gathered read or write: at most this many bytes and IOV_MAX pieces.
constexpr std::uint64_t kBatchBytes = std::uint64_t{8} << 20;
constexpr std::size_t kMaxIov = IOV_MAX < 1024 ? IOV_MAX : 1024;

// Writes every piece of `iov` (consumed: the vector is edited as writes land) from the file's
// start, kBatchBytes per writev. Each batch's writeback starts at once (sync_file_range), so the
// disk works while the next batch is copied and the final fsync only waits for the tail; a plain
// write-then-fsync leaves the disk idle during the copy and the CPU idle during the fsync.
void writeAllV(int fd, std::vector<::iovec>& iov, const std::string& path) {
    std::size_t first = 0;
    std::uint64_t offset = 0;
    std::vector<::iovec> batch;
    while (first < iov.size()) {
        batch.clear();
        std::uint64_t room = kBatchBytes;
        for (std::size_t i = first; i < iov.size() && batch.size() < kMaxIov && room > 0; ++i) {
            const std::size_t len =
                static_cast<std::size_t>(std::min<std::uint64_t>(iov[i].iov_len, room));
            batch.push_back({iov[i].iov_base, len});
            room -= len;
        }
        ::ssize_t n = ::writev(fd, batch.data(), static_cast<int>(batch.size()));
        if (n < 0) {
            if (errno == EINTR) continue;
            ioFail(path, "write", errno);
        }
        if (n == 0) ioFail(path, "write", EIO);
#ifdef __linux__
        // A hint only: where it fails (a file system without it), the fsync does all the work.
        (void)::sync_file_range(fd, static_cast<::off64_t>(offset), n, SYNC_FILE_RANGE_WRITE);
#endif
        offset += static_cast<std::uint64_t>(n);
        while (n > 0 && first < iov.size()) {
            const auto take = std::min(static_cast<std::size_t>(n), iov[first].iov_len);
            iov[first].iov_base = static_cast<char*>(iov[first].iov_base) + take;
            iov[first].iov_len -= take;
            n -= static_cast<::ssize_t>(take);
            if (iov[first].iov_len == 0) ++first;
        }
    }
}

// Reads every piece of `iov` from `offset` on (consumed likewise).
void readAllV(int fd, std::span<::iovec> iov, std::uint64_t offset, const std::string& path) {
    std::size_t first = 0;
    while (first < iov.size() && iov[first].iov_len == 0)
        ++first;
    while (first < iov.size()) {
        const int count = static_cast<int>(std::min(kMaxIov, iov.size() - first));
        ::ssize_t n = ::preadv(fd, iov.data() + first, count, static_cast<::off_t>(offset));
        if (n < 0) {
            if (errno == EINTR) continue;
            ioFail(path, "read", errno);
        }
        if (n == 0)
            throw Error(ErrorKind::Format, "'" + path + "' is truncated (ends at byte " +
                                               std::to_string(offset) + ")");
        offset += static_cast<std::uint64_t>(n);
        while (n > 0 && first < iov.size()) {
            const auto take = std::min(static_cast<std::size_t>(n), iov[first].iov_len);
            iov[first].iov_base = static_cast<char*>(iov[first].iov_base) + take;
            iov[first].iov_len -= take;
            n -= static_cast<::ssize_t>(take);
            if (iov[first].iov_len == 0) ++first;
        }
    }
}

struct Bytes {
    const char* at = nullptr;
    std::size_t size = 0;
};

// A chunk the loader reads: file bytes [offset, offset + size), landing in up to three pieces
// (the part before the needed elements and the part after go to a staging buffer).
struct ChunkRead {
    std::size_t file = 0; // index into the metadata's files
    std::uint64_t offset = 0;
    std::uint64_t size = 0;
    std::array<Bytes, 3> pieces{};
    int count = 0;
    const std::string* expect = nullptr;
    std::int32_t unit = 0;
};

// Hashes chunks [0, ready) as the reader publishes them, on a pool of threads; remembers the
// first mismatch. The destructor stops and joins the threads (also when the reader throws).
class Verifier {
public:
    explicit Verifier(const std::vector<ChunkRead>& chunks) : chunks_(chunks) {
        const unsigned n =
            std::max(1u, std::min<unsigned>(hashThreads(), static_cast<unsigned>(chunks.size())));
        for (unsigned i = 0; i < n; ++i)
            threads_.emplace_back([this] { work(); });
    }
    ~Verifier() {
        {
            const std::lock_guard lock(mutex_);
            stop_ = true;
        }
        ready_cv_.notify_all();
    }
    Verifier(const Verifier&) = delete;
    Verifier& operator=(const Verifier&) = delete;
    void publish(std::size_t ready) {
        {
            const std::lock_guard lock(mutex_);
            ready_ = ready;
        }
        ready_cv_.notify_all();
    }
    bool failed() const { return bad_.load() != kNone; }
    // Waits for every published chunk; the index of the first bad one, or kNone.
    std::size_t finish() {
        std::unique_lock lock(mutex_);
        closed_ = true; // a thread waiting on a chunk past the last published one gives up
        ready_cv_.notify_all();
        done_cv_.wait(lock, [&] { return hashed_ == ready_; });
        return bad_.load();
    }
    static constexpr std::size_t kNone = static_cast<std::size_t>(-1);

private:
    // Takes one chunk at a time; it waits until the chunk is read, or until the reader stops
    // publishing (finish).
    void work() {
        for (;;) {
            const std::size_t i = next_.fetch_add(1);
            if (i >= chunks_.size()) return;
            {
                std::unique_lock lock(mutex_);
                ready_cv_.wait(lock, [&] { return stop_ || closed_ || i < ready_; });
                if (stop_ || i >= ready_) return;
            }
            const std::array<std::string_view, 3> pieces = piecesOf(chunks_[i]);
            Sha256 sha;
            for (int p = 0; p < chunks_[i].count; ++p)
                sha.update(pieces[static_cast<std::size_t>(p)]);
            if (sha.hex() != *chunks_[i].expect) {
                std::size_t cur = bad_.load();
                while ((cur == kNone || i < cur) && !bad_.compare_exchange_weak(cur, i)) {
                }
            }
            {
                const std::lock_guard lock(mutex_);
                hashed_ += 1;
            }
            done_cv_.notify_all();
        }
    }
    static std::array<std::string_view, 3> piecesOf(const ChunkRead& c) {
        std::array<std::string_view, 3> out;
        for (int p = 0; p < c.count; ++p) {
            const Bytes& b = c.pieces[static_cast<std::size_t>(p)];
            out[static_cast<std::size_t>(p)] = {b.at, b.size};
        }
        return out;
    }
    const std::vector<ChunkRead>& chunks_;
    std::mutex mutex_;
    std::condition_variable ready_cv_, done_cv_;
    std::size_t ready_ = 0, hashed_ = 0;
    bool stop_ = false, closed_ = false;
    std::atomic<std::size_t> next_{0};
    std::atomic<std::size_t> bad_{kNone};
    std::vector<std::jthread> threads_; // last: joined before the state above goes
};

const SliceTarget* targetOf(std::span<const SliceTarget> targets, const Read& rd) {
    for (const SliceTarget& t : targets)
        if (t.span.unit == rd.unit && rd.begin >= t.span.begin && rd.end <= t.span.end) return &t;
    return nullptr;
}

} // namespace

unsigned hashThreads() {
    return std::clamp(std::thread::hardware_concurrency(), 1u, 8u);
}

void writeChunked(int fd, const std::string& path, std::span<const SliceData> slices,
                  std::uint64_t chunkElements, DataFile& f) {
    std::vector<::iovec> iov;
    struct Job {
        const float* at;
        std::uint64_t elements;
        std::string* out;
    };
    std::vector<Job> jobs;
    auto bytesOf = [](const Job& j) {
        return std::string_view(reinterpret_cast<const char*>(j.at),
                                static_cast<std::size_t>(j.elements * sizeof(float)));
    };
    for (const SliceData& s : slices) {
        if (s.span.elements() == 0) continue;
        Range r{s.span.unit, s.span.begin, s.span.end, {}, {}};
        const std::uint64_t perBlock = chunksPerBlock(r.elements(), chunkElements);
        r.chunks.resize(static_cast<std::size_t>(kStates * perBlock));
        f.bytes += r.bytes();
        f.ranges.push_back(std::move(r));
    }
    // Pointers into f.ranges' chunk lists: taken once the vector no longer grows.
    std::size_t ri = 0;
    for (const SliceData& s : slices) {
        if (s.span.elements() == 0) continue;
        Range& r = f.ranges[ri++];
        const std::uint64_t perBlock = chunksPerBlock(r.elements(), chunkElements);
        const float* blocks[kStates] = {s.master, s.m, s.v};
        for (int b = 0; b < kStates; ++b) {
            iov.push_back({const_cast<float*>(blocks[b]),
                           static_cast<std::size_t>(r.elements() * sizeof(float))});
            for (std::uint64_t j = 0; j < perBlock; ++j)
                jobs.push_back({blocks[b] + j * chunkElements,
                                std::min(chunkElements, r.elements() - j * chunkElements),
                                &r.chunks[static_cast<std::size_t>(
                                    static_cast<std::uint64_t>(b) * perBlock + j)]});
        }
    }
    // The chunks are hashed on a pool of threads while this one writes: one pass over the
    // caller's buffers each, no copy, and the fsync overlaps the hashing's tail.
    std::atomic<std::size_t> next{0};
    {
        std::vector<std::jthread> hashers;
        for (unsigned t = 0; t < hashThreads(); ++t)
            hashers.emplace_back([&] {
                for (std::size_t i = next.fetch_add(1); i < jobs.size(); i = next.fetch_add(1))
                    *jobs[i].out = sha256Hex(bytesOf(jobs[i]));
            });
        writeAllV(fd, iov, path);
        if (::fsync(fd) != 0) ioFail(path, "sync", errno);
    } // the hashers join here (also when the write threw)
    f.sha256 = chunkListSha256(f);
}

void loadChunked(const std::string& dir, const Metadata& m, const std::vector<Read>& reads,
                 std::span<const SliceTarget> targets, LoadStats& stats) {
    const std::uint64_t k = m.chunkElements;
    std::vector<ChunkRead> chunks;
    std::vector<std::unique_ptr<char[]>> staging; // the unneeded edges of partly needed chunks
    auto stage = [&](std::uint64_t bytes) -> char* {
        staging.push_back(std::make_unique<char[]>(static_cast<std::size_t>(bytes)));
        return staging.back().get();
    };
    for (const Read& rd : reads) {
        const DataFile& f = m.files[rd.file];
        const Range& r = f.ranges[rd.range];
        const std::uint64_t e = r.elements(), perBlock = chunksPerBlock(e, k);
        const std::uint64_t lo = rd.begin - r.begin, hi = rd.end - r.begin; // within the range
        const SliceTarget* t = targetOf(targets, rd);
        float* dst[kStates] = {t ? t->master : nullptr, t ? t->m : nullptr, t ? t->v : nullptr};
        for (int s = 0; s < kStates; ++s) {
            const std::uint64_t blockAt =
                rd.offsets[static_cast<std::size_t>(s)] - lo * sizeof(float);
            char* into =
                dst[s] ? reinterpret_cast<char*>(dst[s] + (rd.begin - t->span.begin)) : nullptr;
            for (std::uint64_t j = lo / k; j * k < hi; ++j) {
                const std::uint64_t cLo = j * k, cHi = std::min(cLo + k, e);
                ChunkRead c;
                c.file = rd.file;
                c.offset = blockAt + cLo * sizeof(float);
                c.size = (cHi - cLo) * sizeof(float);
                c.expect = &r.chunks[static_cast<std::size_t>(
                    static_cast<std::uint64_t>(s) * perBlock + j)];
                c.unit = r.unit;
                const std::uint64_t nLo = std::max(cLo, lo), nHi = std::min(cHi, hi);
                if (into == nullptr) {
                    c.pieces[0] = {stage(c.size), static_cast<std::size_t>(c.size)};
                    c.count = 1;
                } else {
                    if (nLo > cLo)
                        c.pieces[static_cast<std::size_t>(c.count++)] = {
                            stage((nLo - cLo) * 4), static_cast<std::size_t>((nLo - cLo) * 4)};
                    c.pieces[static_cast<std::size_t>(c.count++)] = {
                        into + (nLo - lo) * 4, static_cast<std::size_t>((nHi - nLo) * 4)};
                    if (cHi > nHi)
                        c.pieces[static_cast<std::size_t>(c.count++)] = {
                            stage((cHi - nHi) * 4), static_cast<std::size_t>((cHi - nHi) * 4)};
                }
                chunks.push_back(c);
            }
        }
    }
    std::sort(chunks.begin(), chunks.end(), [](const ChunkRead& a, const ChunkRead& b) {
        return a.file != b.file ? a.file < b.file : a.offset < b.offset;
    });

    Verifier verifier(chunks);
    std::vector<::iovec> iov;
    for (std::size_t i = 0; i < chunks.size() && !verifier.failed();) {
        const std::size_t fi = chunks[i].file;
        const DataFile& f = m.files[fi];
        const std::string path = dir + "/" + f.name;
        const int fd = openDataFile(path, f.bytes);
        const FdCloser closer{fd};
        ++stats.filesTouched;
        // Batches of chunks contiguous in the file: one preadv each.
        while (i < chunks.size() && chunks[i].file == fi && !verifier.failed()) {
            const std::uint64_t at = chunks[i].offset;
            std::uint64_t end = at;
            std::size_t j = i;
            iov.clear();
            while (j < chunks.size() && chunks[j].file == fi && chunks[j].offset == end &&
                   (j == i || end - at + chunks[j].size <= kBatchBytes) &&
                   iov.size() + 3 <= kMaxIov) {
                for (int p = 0; p < chunks[j].count; ++p) {
                    const Bytes& b = chunks[j].pieces[static_cast<std::size_t>(p)];
                    iov.push_back({const_cast<char*>(b.at), b.size});
                }
                end += chunks[j].size;
                ++j;
            }
            readAllV(fd, iov, at, path);
            stats.bytesRead += end - at;
            i = j;
            verifier.publish(i);
        }
    }
    const std::size_t bad = verifier.finish();
    if (bad != Verifier::kNone) {
        const ChunkRead& c = chunks[bad];
        throw Error(ErrorKind::Format,
                    "'" + dir + "/" + m.files[c.file].name + "' fails its checksum (bytes " +
                        std::to_string(c.offset) + "–" + std::to_string(c.offset + c.size) +
                        ", unit '" + m.units[static_cast<std::size_t>(c.unit)].name + "')");
    }
}

} // namespace shardscope::checkpoint::detail
