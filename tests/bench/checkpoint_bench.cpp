// Checkpoint save and load throughput per rank against a plain sequential write / read of the
// same bytes on the same disk, as ratios in one run (a plain program: rounds interleave the
// plain and the checkpoint operations so drifts hit both alike; min and median of the ratios).
//
//   save:  checkpoint::writeRankFile (three blocks per unit, sha256 of file and ranges, fsync)
//          vs write(2) of the same bytes + fsync
//   load:  checkpoint::load of the rank's own shard (preadv of its chunks, each one's sha256
//          checked on a pool of threads as the reads land)
//          vs pread(2) of the same file start to end
//   hold:  what a save holds the training loop: synchronous, snapshot to host + writeRankFile
//          + commit (metadata.json, renames, fsyncs); --save-async, the snapshot and the
//          writer thread's start — each against the plain write alone
//   sha256 alone: the same bytes hashed in chunks, two at a time, on the loader's threads — the
//          CPU's bound
// Caches: every file is fsynced and its pages dropped (posix_fadvise DONTNEED) before a read.
// Usage: shardscope_bench_checkpoint [DIR] [MiB of state per rank, default 96] [rounds, default 5]
#include "checkpoint/format.h"
#include "checkpoint/reshard.h"
#include "checkpoint/sha256.h"
#include "checkpoint/store.h"
#include "plan/shape.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <string>
#include <string_view>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace shardscope;
using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

namespace {

double seconds(Clock::time_point a) {
    return std::chrono::duration<double>(Clock::now() - a).count();
}

void dropCache(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY);
    if (fd < 0) return;
    ::fdatasync(fd);
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(fd);
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

std::vector<checkpoint::SliceData> slicesOf(const std::vector<checkpoint::Span>& spans,
                                            const std::vector<float>& state) {
    std::vector<checkpoint::SliceData> slices;
    std::uint64_t at = 0;
    for (const checkpoint::Span& s : spans) {
        const std::uint64_t n = s.elements();
        slices.push_back(
            {s, state.data() + at * 3, state.data() + at * 3 + n, state.data() + at * 3 + 2 * n});
        at += n;
    }
    return slices;
}

} // namespace

int main(int argc, char** argv) {
    const std::string root =
        argc > 1 ? argv[1] : (fs::temp_directory_path() / "shardscope-bench-ckpt").string();
    const std::uint64_t mib = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 96;
    const int rounds = argc > 3 ? std::atoi(argv[3]) : 5;
    fs::remove_all(root);
    fs::create_directories(root);

    // A ZeRO-3 world of 1 over a GPT shape whose state is ≈ `mib` MiB: the rank's file holds
    // every unit, so the commit's metadata is complete.
    const std::uint64_t elementsPerRank = mib * (1u << 20) / checkpoint::kBytesPerElement;
    const std::int64_t d = 256;
    plan::GptShape shape{1, d, 4, 1000, 64};
    while (plan::paramCount(shape) < elementsPerRank)
        ++shape.layers;
    checkpoint::Metadata meta;
    checkpoint::describeModel(meta, shape, 1);
    meta.strategy = "zero3";
    meta.worldSize = 1;
    meta.precision = "bf16";
    meta.microBatch = 1;
    const plan::Policy policy = plan::policyFor(plan::Strategy::Zero3);
    std::vector<checkpoint::Span> spans;
    std::uint64_t elements = 0;
    for (std::size_t u = 0; u < meta.units.size(); ++u) {
        spans.push_back(checkpoint::ownedSpan(checkpoint::placementOf(policy, 1, 0), true,
                                              static_cast<std::int32_t>(u),
                                              meta.units[u].elements));
        elements += spans.back().elements();
    }
    std::vector<float> state(elements * 3);
    for (std::size_t i = 0; i < state.size(); ++i)
        state[i] = static_cast<float>(i % 9973) * 1e-3f;
    const std::uint64_t bytes = elements * checkpoint::kBytesPerElement;

    // Each round interleaves the plain and the checkpoint operations, so that a drift of the
    // machine (other jobs, the disk's cache) hits both alike; ratios are per round.
    std::vector<double> plainW, saveW, holdSync, holdAsync, plainR, loadR, hashT;
    for (int r = 0; r < rounds; ++r) {
        // Plain sequential write + fsync.
        const std::string plain = root + "/plain-" + std::to_string(r) + ".bin";
        auto t0 = Clock::now();
        {
            const int fd = ::open(plain.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
            const char* p = reinterpret_cast<const char*>(state.data());
            std::uint64_t left = bytes;
            while (left > 0) {
                const ssize_t n = ::write(fd, p, std::min<std::uint64_t>(left, 8u << 20));
                if (n <= 0) return 1;
                p += n;
                left -= static_cast<std::uint64_t>(n);
            }
            ::fsync(fd);
            ::close(fd);
        }
        plainW.push_back(seconds(t0));

        // A synchronous save: snapshot + rank file + commit, all holding the loop.
        checkpoint::Metadata m = meta;
        m.step = 2 * r;
        std::string temp = checkpoint::tempDirName(m.step, checkpoint::newSaveId());
        t0 = Clock::now();
        std::vector<float> snapshot(state); // the host copy a save makes of device state
        checkpoint::createTemp(root, temp);
        const auto w0 = Clock::now();
        m.files.push_back(checkpoint::writeRankFile(root, temp, 0, slicesOf(spans, snapshot)));
        saveW.push_back(seconds(w0));
        const std::string dir = checkpoint::commit(root, temp, m);
        holdSync.push_back(seconds(t0));

        // An asynchronous save (--save-async): the loop is held for the snapshot and the
        // writer's start; the write, fsync and commit happen while it would train.
        m = meta;
        m.step = 2 * r + 1;
        temp = checkpoint::tempDirName(m.step, checkpoint::newSaveId());
        t0 = Clock::now();
        std::vector<float> snapshot2(state);
        checkpoint::createTemp(root, temp);
        checkpoint::DataFile written;
        std::thread writer([&] {
            written = checkpoint::writeRankFile(root, temp, 0, slicesOf(spans, snapshot2));
        });
        holdAsync.push_back(seconds(t0));
        writer.join();
        m.files.push_back(written);
        checkpoint::commit(root, temp, m);

        // Reads from disk: plain pread of the whole file vs the loader's plan.
        const std::string file = dir + "/" + checkpoint::dataFileName(0);
        dropCache(plain);
        t0 = Clock::now();
        {
            const int fd = ::open(plain.c_str(), O_RDONLY);
            std::vector<char> buf(8u << 20);
            std::uint64_t off = 0;
            volatile char sink = 0;
            while (off < bytes) {
                const ssize_t n = ::pread(fd, buf.data(), buf.size(), static_cast<off_t>(off));
                if (n <= 0) return 1;
                sink = static_cast<char>(sink + buf[0]);
                off += static_cast<std::uint64_t>(n);
            }
            ::close(fd);
        }
        plainR.push_back(seconds(t0));
        dropCache(file);
        const checkpoint::Opened c = checkpoint::openCheckpoint(dir);
        std::vector<float> into(state.size());
        std::vector<checkpoint::SliceTarget> targets;
        std::uint64_t at = 0;
        for (const checkpoint::Span& sp : spans) {
            const std::uint64_t n = sp.elements();
            targets.push_back(
                {sp, into.data() + at * 3, into.data() + at * 3 + n, into.data() + at * 3 + 2 * n});
            at += n;
        }
        t0 = Clock::now();
        checkpoint::load(c, targets);
        loadR.push_back(seconds(t0));
        if (std::memcmp(into.data(), state.data(), bytes) != 0) {
            std::fprintf(stderr, "loaded state differs\n");
            return 1;
        }
        // The CPU's bound: sha256 of the same bytes in 256 KiB chunks on as many threads.
        t0 = Clock::now();
        {
            std::atomic<std::uint64_t> next{0};
            std::vector<std::jthread> pool;
            const unsigned threads = std::clamp(std::thread::hardware_concurrency(), 1u, 8u);
            for (unsigned t = 0; t < threads; ++t)
                pool.emplace_back([&] {
                    const auto* p = reinterpret_cast<const char*>(state.data());
                    for (std::uint64_t o = next.fetch_add(1 << 18); o < bytes;
                         o = next.fetch_add(1 << 18))
                        (void)checkpoint::sha256Hex(std::string_view(
                            p + o,
                            static_cast<std::size_t>(std::min<std::uint64_t>(1 << 18, bytes - o))));
                });
        }
        hashT.push_back(seconds(t0));
        fs::remove(plain);
        fs::remove_all(dir);
        fs::remove_all(root + "/" + checkpoint::stepDirName(2 * r + 1));
    }
    std::vector<double> saveRatio, loadRatio;
    for (int r = 0; r < rounds; ++r) {
        saveRatio.push_back(plainW[static_cast<std::size_t>(r)] /
                            saveW[static_cast<std::size_t>(r)]);
        loadRatio.push_back(plainR[static_cast<std::size_t>(r)] /
                            loadR[static_cast<std::size_t>(r)]);
    }
    const double mb = static_cast<double>(bytes) / 1e6;
    std::printf(
        "checkpoint bench: %.1f MB per rank (%s, %zu units), %d interleaved rounds, in %s\n", mb,
        "zero3, world 1", meta.units.size(), rounds, root.c_str());
    std::printf("  plain write+fsync      %8.1f MB/s (median)\n", mb / median(plainW));
    std::printf("  rank file (save)       %8.1f MB/s   ratio to plain: min %.2f median %.2f\n",
                mb / median(saveW), *std::min_element(saveRatio.begin(), saveRatio.end()),
                median(saveRatio));
    std::printf("  plain read             %8.1f MB/s (median)\n", mb / median(plainR));
    std::printf("  load (chunks verified) %8.1f MB/s   ratio to plain: min %.2f median %.2f\n",
                mb / median(loadR), *std::min_element(loadRatio.begin(), loadRatio.end()),
                median(loadRatio));
    std::printf("  sha256 alone           %8.1f MB/s   on %u threads (the CPU's bound on both)\n",
                mb / median(hashT), std::clamp(std::thread::hardware_concurrency(), 1u, 8u));
    std::printf("  save holds the loop    sync %.3f s (%.2f x the plain write), --save-async %.3f "
                "s (%.2f x)\n",
                median(holdSync), median(holdSync) / median(plainW), median(holdAsync),
                median(holdAsync) / median(plainW));
    fs::remove_all(root);
    return 0;
}
