// Loading: opening DIR or DIR/step-K, the resharding load, verification, the listing.
#include "checkpoint/chunked.h"
#include "checkpoint/fs_util.h"
#include "checkpoint/sha256.h"
#include "checkpoint/store.h"
#include "core/error.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <map>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace shardscope::checkpoint {

using namespace detail;
namespace fs = std::filesystem;

namespace {

constexpr std::size_t kChunk = std::size_t{4} << 20;

bool exists(const std::string& p) {
    struct stat st {};
    return ::lstat(p.c_str(), &st) == 0;
}

Metadata readMetadata(const std::string& dir) {
    const std::string path = dir + "/metadata.json";
    return parseMetadata(readSmallFile(path, kMaxMetadataBytes), path);
}

class Fd {
public:
    explicit Fd(int fd) : fd_(fd) {}
    ~Fd() {
        if (fd_ >= 0) ::close(fd_);
    }
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    int get() const { return fd_; }

private:
    int fd_;
};

// The target that needs all of range `r` when the range's only read covers it whole and the
// target takes all three states; null otherwise.
const SliceTarget* wholeTarget(const std::vector<Read>& reads,
                               const std::vector<std::size_t>& which, const Range& r,
                               std::span<const SliceTarget> targets) {
    if (which.size() != 1) return nullptr;
    const Read& rd = reads[which.front()];
    if (rd.begin != r.begin || rd.end != r.end) return nullptr;
    for (const SliceTarget& t : targets)
        if (t.span.unit == rd.unit && rd.begin >= t.span.begin && rd.end <= t.span.end)
            return t.master && t.m && t.v ? &t : nullptr;
    return nullptr;
}

} // namespace

Opened openCheckpoint(const std::string& path) {
    Opened c;
    std::string p = path;
    while (p.size() > 1 && p.back() == '/')
        p.pop_back();
    struct stat st {};
    if (::stat(p.c_str(), &st) != 0) ioFail(p, "open the checkpoint", errno);
    if (!S_ISDIR(st.st_mode))
        throw Error(ErrorKind::Format, "'" + p + "' is not a checkpoint folder");
    if (exists(p + "/metadata.json")) {
        c.dir = p;
        c.root = fs::path(p).parent_path().string();
        if (c.root.empty()) c.root = ".";
    } else if (exists(p + "/latest")) {
        std::string name = readSmallFile(p + "/latest", 64);
        while (!name.empty() && (name.back() == '\n' || name.back() == '\r'))
            name.pop_back();
        if (!stepOf(name))
            throw Error(ErrorKind::Format, "'" + p + "/latest' does not name a step (\"step-K\")");
        c.root = p;
        c.dir = p + "/" + name;
        struct stat target {};
        if (::stat(c.dir.c_str(), &target) != 0 || !S_ISDIR(target.st_mode))
            throw Error(ErrorKind::Format, "'" + p + "/latest' names '" + name +
                                               "', which is not a step folder in '" + p + "'");
    } else {
        throw Error(ErrorKind::Format,
                    "'" + p + "' is not a checkpoint (no metadata.json and no 'latest')");
    }
    c.meta = readMetadata(c.dir);
    const auto k = stepOf(fs::path(c.dir).filename().string());
    if (k && *k != c.meta.step)
        throw Error(ErrorKind::Format, "'" + c.dir + "/metadata.json' says step " +
                                           std::to_string(c.meta.step) + " inside folder '" +
                                           fs::path(c.dir).filename().string() + "'");
    return c;
}

LoadStats load(const Opened& c, std::span<const SliceTarget> targets) {
    std::vector<Span> needs;
    for (const SliceTarget& t : targets)
        needs.push_back(t.span);
    const std::vector<Read> reads = planReads(c.meta, needs);
    LoadStats stats;
    for (const Read& rd : reads)
        stats.bytesNeeded += rd.bytes();
    if (c.meta.version >= 2) {
        loadChunked(c.dir, c.meta, reads, targets, stats);
        return stats;
    }
    // Version 1: a range's one checksum covers all of it, so touched ranges are read whole.
    // Reads grouped by file, then by range: each touched range is read once, hashed, and copied
    // out.
    std::map<std::size_t, std::map<std::size_t, std::vector<std::size_t>>> byFile;
    for (std::size_t i = 0; i < reads.size(); ++i)
        byFile[reads[i].file][reads[i].range].push_back(i);
    std::vector<char> chunk;
    for (const auto& [fi, ranges] : byFile) {
        const DataFile& f = c.meta.files[fi];
        const std::string path = c.dir + "/" + f.name;
        const Fd fd(openDataFile(path, f.bytes));
        ++stats.filesTouched;
        const std::vector<std::uint64_t> offsets = rangeOffsets(f);
        for (const auto& [ri, which] : ranges) {
            const Range& r = f.ranges[ri];
            Sha256 sha;
            const std::uint64_t base = offsets[ri];
            // A range a target needs whole (same shard boundaries): read straight into the
            // target's three blocks and hash them there — no staging copy.
            if (const SliceTarget* whole = wholeTarget(reads, which, r, targets)) {
                float* dst[kStates] = {whole->master, whole->m, whole->v};
                const std::uint64_t blockBytes = r.elements() * sizeof(float);
                for (int s = 0; s < kStates; ++s) {
                    float* into = dst[s] + (r.begin - whole->span.begin);
                    readAt(fd.get(), into, static_cast<std::size_t>(blockBytes),
                           base + static_cast<std::uint64_t>(s) * blockBytes, path);
                    sha.update(into, static_cast<std::size_t>(blockBytes));
                }
                stats.bytesRead += r.bytes();
                if (sha.hex() != r.sha256)
                    throw Error(ErrorKind::Format,
                                "'" + path + "' fails its checksum (bytes " + std::to_string(base) +
                                    "–" + std::to_string(base + r.bytes()) + ", unit '" +
                                    c.meta.units[static_cast<std::size_t>(r.unit)].name + "')");
                continue;
            }
            for (std::uint64_t at = 0; at < r.bytes(); at += kChunk) {
                const std::size_t n =
                    static_cast<std::size_t>(std::min<std::uint64_t>(kChunk, r.bytes() - at));
                chunk.resize(n);
                readAt(fd.get(), chunk.data(), n, base + at, path);
                sha.update(chunk.data(), n);
                stats.bytesRead += n;
                for (std::size_t ix : which) {
                    const Read& rd = reads[ix];
                    // The target whose span this read fills.
                    for (const SliceTarget& t : targets) {
                        if (t.span.unit != rd.unit || rd.begin < t.span.begin ||
                            rd.end > t.span.end)
                            continue;
                        float* dst[kStates] = {t.master, t.m, t.v};
                        for (int s = 0; s < kStates; ++s) {
                            const std::uint64_t lo = rd.offsets[static_cast<std::size_t>(s)] - base;
                            const std::uint64_t hi = lo + (rd.end - rd.begin) * sizeof(float);
                            const std::uint64_t b = std::max(lo, at),
                                                e = std::min<std::uint64_t>(hi, at + n);
                            if (b >= e || dst[s] == nullptr) continue;
                            std::memcpy(
                                reinterpret_cast<char*>(dst[s] + (rd.begin - t.span.begin)) +
                                    (b - lo),
                                chunk.data() + (b - at), e - b);
                        }
                        break;
                    }
                }
            }
            if (sha.hex() != r.sha256)
                throw Error(ErrorKind::Format,
                            "'" + path + "' fails its checksum (bytes " + std::to_string(base) +
                                "–" + std::to_string(base + r.bytes()) + ", unit '" +
                                c.meta.units[static_cast<std::size_t>(r.unit)].name + "')");
        }
    }
    return stats;
}

namespace {

// Re-hashes one data file (whole file and every range or chunk).
FileCheck checkFile(const Opened& c, const DataFile& f, std::vector<char>& chunk) {
    FileCheck fc;
    fc.name = f.name;
    const std::string path = c.dir + "/" + f.name;
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
        fc.state = FileCheck::State::Missing;
        fc.problem = "missing";
        return fc;
    }
    // A folder, FIFO or device in a data file's place is not a file of the wrong size.
    if (!S_ISREG(st.st_mode)) {
        fc.state = FileCheck::State::Unreadable;
        fc.problem = S_ISDIR(st.st_mode) ? "a folder, not a file"
                                         : "not a regular file (a device, FIFO or socket)";
        return fc;
    }
    fc.bytes = static_cast<std::uint64_t>(st.st_size);
    try {
        const Fd fd(openDataFile(path, f.bytes));
        Sha256 whole;
        const std::vector<std::uint64_t> offsets = rangeOffsets(f);
        std::string badRange;
        // Bytes [from, from + bytes) into the whole file's hash and `part`.
        auto feed = [&](Sha256& part, std::uint64_t from, std::uint64_t bytes) {
            for (std::uint64_t at = 0; at < bytes; at += kChunk) {
                const std::size_t n =
                    static_cast<std::size_t>(std::min<std::uint64_t>(kChunk, bytes - at));
                readAt(fd.get(), chunk.data(), n, from + at, path);
                if (c.meta.version == 1)
                    whole.update(chunk.data(), n); // version 2's is the hash list
                part.update(chunk.data(), n);
            }
        };
        for (std::size_t ri = 0; ri < f.ranges.size(); ++ri) {
            const Range& r = f.ranges[ri];
            bool bad = false;
            if (c.meta.version == 1) {
                Sha256 part;
                feed(part, offsets[ri], r.bytes());
                bad = part.hex() != r.sha256;
            } else { // every chunk of every block, in file order
                const std::uint64_t k = c.meta.chunkElements,
                                    perBlock = chunksPerBlock(r.elements(), k);
                for (std::uint64_t j = 0; j < kStates * perBlock; ++j) {
                    const std::uint64_t lo = (j % perBlock) * k, n = std::min(k, r.elements() - lo);
                    Sha256 part;
                    feed(part,
                         offsets[ri] + (j / perBlock) * r.elements() * sizeof(float) +
                             lo * sizeof(float),
                         n * sizeof(float));
                    bad = bad || part.hex() != r.chunks[static_cast<std::size_t>(j)];
                }
            }
            if (badRange.empty() && bad)
                badRange = "unit '" + c.meta.units[static_cast<std::size_t>(r.unit)].name + "'";
        }
        // Version 2's file checksum is over the chunk hashes just compared (parseMetadata
        // checked it); version 1's is over the bytes.
        if ((c.meta.version == 1 && whole.hex() != f.sha256) || !badRange.empty()) {
            fc.state = FileCheck::State::BadChecksum;
            fc.problem =
                "checksum mismatch" + (badRange.empty() ? std::string() : " (in " + badRange + ")");
        }
    } catch (const Error& e) {
        fc.state = static_cast<std::uint64_t>(st.st_size) != f.bytes ? FileCheck::State::WrongSize
                                                                     : FileCheck::State::Unreadable;
        fc.problem = fc.state == FileCheck::State::WrongSize
                         ? std::to_string(st.st_size) + " bytes, the metadata says " +
                               std::to_string(f.bytes)
                         : e.what();
    }
    return fc;
}

} // namespace

std::vector<FileCheck> verifyFiles(const Opened& c) {
    // Files are independent: verified on the hashing threads, reported in the metadata's order.
    std::vector<FileCheck> out(c.meta.files.size());
    std::atomic<std::size_t> next{0};
    {
        std::vector<std::jthread> pool;
        const unsigned threads =
            std::max(1u, std::min<unsigned>(hashThreads(), static_cast<unsigned>(out.size())));
        for (unsigned t = 0; t < threads; ++t)
            pool.emplace_back([&] {
                std::vector<char> chunk(kChunk);
                for (std::size_t i = next.fetch_add(1); i < out.size(); i = next.fetch_add(1)) {
                    try {
                        out[i] = checkFile(c, c.meta.files[i], chunk);
                    } catch (const std::exception& e) { // never out of a thread
                        out[i] = {c.meta.files[i].name, 0, FileCheck::State::Unreadable, e.what()};
                    }
                }
            });
    }
    return out;
}

namespace {
// What DIR/latest names ("?" when unreadable, "" when absent).
void readLatest(Listing& l) {
    if (!exists(l.root + "/latest")) return;
    try {
        l.latest = readSmallFile(l.root + "/latest", 64);
        while (!l.latest.empty() && (l.latest.back() == '\n' || l.latest.back() == '\r'))
            l.latest.pop_back();
    } catch (const Error&) {
        l.latest = "?";
    }
}
} // namespace

Listing listCheckpoints(const std::string& rootIn) {
    Listing l;
    l.root = rootIn;
    while (l.root.size() > 1 && l.root.back() == '/')
        l.root.pop_back();
    // DIR/step-K itself (what verify and --resume also take): that one step of its folder.
    if (exists(l.root + "/metadata.json")) {
        StepEntry s;
        s.name = fs::path(l.root).filename().string();
        try {
            s.meta = readMetadata(l.root);
        } catch (const Error& e) {
            s.problem = e.what();
        }
        l.steps.push_back(std::move(s));
        l.root = fs::path(l.root).parent_path().string();
        if (l.root.empty()) l.root = ".";
        readLatest(l);
        return l;
    }
    std::error_code ec;
    fs::directory_iterator it(l.root, ec);
    if (ec) ioFail(l.root, "list", ec.value());
    std::vector<std::pair<std::int64_t, std::string>> steps;
    for (const fs::directory_entry& e : it) {
        const std::string name = e.path().filename().string();
        if (name.find(".tmp-") != std::string::npos)
            l.temps.push_back(name);
        else if (const auto k = stepOf(name); k && e.is_directory(ec))
            steps.push_back({*k, name});
    }
    std::sort(steps.begin(), steps.end());
    std::sort(l.temps.begin(), l.temps.end());
    for (const auto& [k, name] : steps) {
        StepEntry s;
        s.name = name;
        try {
            s.meta = readMetadata(l.root + "/" + name);
        } catch (const Error& e) {
            s.problem = e.what();
        }
        l.steps.push_back(std::move(s));
    }
    readLatest(l);
    if (l.steps.empty() && l.temps.empty() && l.latest.empty())
        throw Error(ErrorKind::Format,
                    "'" + l.root + "' is not a checkpoint folder (no step-K, no 'latest')");
    return l;
}

} // namespace shardscope::checkpoint
