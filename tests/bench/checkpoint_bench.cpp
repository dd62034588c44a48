// Checkpoint save and load throughput per rank against a plain sequential write / read of the
// same bytes on the same disk, as ratios in one run (a plain program: each measurement is the
// median of several rounds, alternating the two so drifts hit both alike).
//
//   save:  checkpoint::writeRankFile (three blocks per unit, sha256 of file and ranges, fsync)
//          vs write(2) of the same bytes + fsync
//   load:  checkpoint::load of the rank's own shard (pread of the ranges, sha256 checked)
//          vs pread(2) of the same file start to end
//   hold:  what a save holds the training loop — snapshot to host + writeRankFile + commit
//          (metadata.json, renames, fsyncs) — against the plain write alone
// Caches: every file is fsynced and its pages dropped (posix_fadvise DONTNEED) before a read.
// Usage: shardscope_bench_checkpoint [DIR] [MiB of state per rank, default 96] [rounds, default 5]
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "checkpoint/format.h"
#include "checkpoint/reshard.h"
#include "checkpoint/store.h"
#include "plan/shape.h"

using namespace shardscope;
using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

namespace {

double seconds(Clock::time_point a) { return std::chrono::duration<double>(Clock::now() - a).count(); }

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

} // namespace

int main(int argc, char** argv) {
    const std::string root = argc > 1 ? argv[1] : (fs::temp_directory_path() / "shardscope-bench-ckpt").string();
    const std::uint64_t mib = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 96;
    const int rounds = argc > 3 ? std::atoi(argv[3]) : 5;
    fs::remove_all(root);
    fs::create_directories(root);

    // A ZeRO-3 world of 1 over a GPT shape whose state is ≈ `mib` MiB: the rank's file holds
    // every unit, so the commit's metadata is complete.
    const std::uint64_t elementsPerRank = mib * (1u << 20) / checkpoint::kBytesPerElement;
    const std::int64_t d = 256;
    plan::GptShape shape{1, d, 4, 1000, 64};
    while (plan::paramCount(shape) < elementsPerRank) ++shape.layers;
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
        spans.push_back(checkpoint::ownedSpan(checkpoint::placementOf(policy, 1, 0), true, static_cast<std::int32_t>(u),
                                              meta.units[u].elements));
        elements += spans.back().elements();
    }
    std::vector<float> state(elements * 3);
    for (std::size_t i = 0; i < state.size(); ++i) state[i] = static_cast<float>(i % 9973) * 1e-3f;
    const std::uint64_t bytes = elements * checkpoint::kBytesPerElement;

    std::vector<double> plainW, saveW, holdW, plainR, loadR;
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

        // The checkpoint: a rank file (timed alone), then the hold (snapshot + file + commit).
        const std::string temp = checkpoint::tempDirName(r, checkpoint::newSaveId());
        t0 = Clock::now();
        std::vector<float> snapshot(state); // the host copy a save makes of device state
        checkpoint::createTemp(root, temp);
        std::vector<checkpoint::SliceData> slices;
        std::uint64_t at = 0;
        for (const checkpoint::Span& s : spans) {
            const std::uint64_t n = s.elements();
            slices.push_back({s, snapshot.data() + at * 3, snapshot.data() + at * 3 + n, snapshot.data() + at * 3 + 2 * n});
            at += n;
        }
        const auto w0 = Clock::now();
        checkpoint::Metadata m = meta;
        m.step = r;
        m.files.push_back(checkpoint::writeRankFile(root, temp, 0, slices));
        saveW.push_back(seconds(w0));
        // The commit (metadata.json listing this rank's file, renames, fsyncs) as rank 0 does it.
        const std::string dir = checkpoint::commit(root, temp, m);
        holdW.push_back(seconds(t0));

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
        const checkpoint::Opened c{root, dir, m};
        std::vector<float> into(state.size());
        std::vector<checkpoint::SliceTarget> targets;
        at = 0;
        for (const checkpoint::Span& s : spans) {
            const std::uint64_t n = s.elements();
            targets.push_back({s, into.data() + at * 3, into.data() + at * 3 + n, into.data() + at * 3 + 2 * n});
            at += n;
        }
        t0 = Clock::now();
        checkpoint::load(c, targets);
        loadR.push_back(seconds(t0));
        if (std::memcmp(into.data(), state.data(), bytes) != 0) {
            std::fprintf(stderr, "loaded state differs\n");
            return 1;
        }
        fs::remove(plain);
    }
    const double mb = static_cast<double>(bytes) / 1e6;
    std::printf("checkpoint bench: %.1f MB per rank (%s, %zu units), %d rounds, medians, in %s\n", mb, "zero3, world 1",
                meta.units.size(), rounds, root.c_str());
    std::printf("  plain write+fsync   %8.1f MB/s\n", mb / median(plainW));
    std::printf("  rank file (save)    %8.1f MB/s   ratio %.2f\n", mb / median(saveW), median(plainW) / median(saveW));
    std::printf("  save holds the loop %8.3f s      %.2f x the plain write\n", median(holdW), median(holdW) / median(plainW));
    std::printf("  plain read          %8.1f MB/s\n", mb / median(plainR));
    std::printf("  load (plan+sha256)  %8.1f MB/s   ratio %.2f\n", mb / median(loadR), median(plainR) / median(loadR));
    fs::remove_all(root);
    return 0;
}
