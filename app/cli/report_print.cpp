#include "report_print.h"

#include "core/error.h"
#include "core/user_files.h"
#include "estimate_common.h" // humanBytes
#include "protocol/protocol.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <iterator>
#include <unistd.h>
#include <vector>

namespace shardscope::cli {
namespace {

std::uint64_t kindsTotal(const report::KindValues& v) {
    return static_cast<std::uint64_t>(report::total(v));
}

double medianStepMs(const report::RunReport& r) {
    std::vector<double> ms = r.stepMs;
    if (ms.empty()) return 0;
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
}

} // namespace

namespace {

// `run --resume CK --steps 0 --save NEW` trains nothing: what it read and wrote, not a training
// comparison (its "model states" would be the 0 B of a run that never stepped).
void printConversion(const report::RunReport& r) {
    const report::ResumedFrom& from = *r.resumedFrom;
    std::printf("\nconverted %s (a %d-rank %s run, step %lld) to %d rank%s, %s\n",
                protocol::printableText(from.path).c_str(), from.worldSize,
                protocol::printableText(from.strategy).c_str(), static_cast<long long>(from.step),
                r.worldSize, r.worldSize == 1 ? "" : "s", r.strategy.c_str());
    std::printf("%-6s %s\n", "rank", "read from the checkpoint");
    for (const report::RankReport& rank : r.ranks)
        std::printf("%-6d %s\n", rank.rank, humanBytes(rank.checkpointBytesRead).c_str());
    for (const report::SaveRecord& s : r.saves)
        std::printf("wrote %s: %s (every rank's files) in %.2f s\n",
                    protocol::printableText(s.path).c_str(), humanBytes(s.bytes).c_str(),
                    s.seconds);
    std::printf("param digest %s\n", r.paramDigest.c_str());
}

} // namespace

void printRunSummary(const report::RunReport& r) {
    if (r.steps == 0 && r.resumedFrom) return printConversion(r);
    std::printf("\n%-6s %-28s %-28s %-28s %s\n", "rank", "model states (measured)",
                "peak (measured)", "comm sent/step", "exposed comm");
    for (const report::RankReport& rank : r.ranks) {
        char exposed[32];
        std::snprintf(exposed, sizeof exposed, "%.1f%% of step",
                      100.0 * rank.exposedComm.fractionMedian);
        std::printf("%-6d %-28s %-28s %-28s %s\n", rank.rank,
                    humanBytes(report::stateTotal(rank.modelStateBytes)).c_str(),
                    humanBytes(rank.peakTotal).c_str(),
                    humanBytes(kindsTotal(rank.commBytesPerStep)).c_str(), exposed);
    }
    // Offloaded runs: the share of a step moving state between tiers with no compute
    // (train/overlap.h).
    bool moved = false;
    for (const report::RankReport& rank : r.ranks)
        moved = moved || rank.exposedTransfer.transferUnionNs > 0;
    if (moved) {
        std::printf("exposed transfers (median share of a step):");
        for (const report::RankReport& rank : r.ranks)
            std::printf(" rank %d %.1f%%", rank.rank, 100.0 * rank.exposedTransfer.fractionMedian);
        std::printf("; run %.1f%%\n", 100.0 * r.exposedTransferFraction);
    }
    std::printf("theory: model states %s, predicted peak %s, comm %s per step (≈ %.2f Ψ)\n",
                humanBytes(report::stateTotal(r.theory.modelStateBytes)).c_str(),
                humanBytes(r.theory.predictedPeakBytes).c_str(),
                humanBytes(kindsTotal(r.theory.commBytesPerStep)).c_str(), r.theory.psiEquivalents);
    std::printf("model states equal theory: %s; peak Δ %+.2f%%; comm Δ %+.2f%%\n",
                r.comparison.modelStatesEqual ? "yes, byte for byte" : "NO",
                100.0 * r.comparison.peakDeltaFraction, 100.0 * r.comparison.commDeltaFraction);
    for (const std::string& n : r.notes)
        std::printf("note: %s\n", protocol::printableText(n).c_str());
    if (!r.gemmEngine.empty())
        std::printf("gemm: %s%s\n", protocol::printableText(r.gemmEngine).c_str(),
                    r.bf16Gemm ? "; linear layers in bf16 on the CPU's bf16 units" : "");
    if (!r.losses.empty()) std::printf("final loss %.4f; ", r.losses.back());
    std::printf("param digest %s\n", r.paramDigest.c_str());
}

void printCompareTable(const report::CompareReport& c) {
    if (c.strategies.empty()) return;
    const report::RunReport& ddp = c.strategies.front();
    const double ddpStates =
        static_cast<double>(report::stateTotal(ddp.worstRank().modelStateBytes));
    const double ddpTheory =
        static_cast<double>(report::stateTotal(ddp.theoryModelStatesOf(ddp.worstRank().rank)));
    std::printf("\n%-13s %13s %13s %6s %15s %13s %13s %9s %8s %12s\n", "strategy", "states meas.",
                "states theory", "equal", "savings m/t", "comm meas.", "comm theory", "step ms",
                "exposed", "max|Δ| vs ddp");
    for (const report::RunReport& r : c.strategies) {
        // A pipelined run's worst rank is compared with its own stage's theory.
        const report::RankReport& worst = r.worstRank();
        const std::uint64_t states = report::stateTotal(worst.modelStateBytes);
        const std::uint64_t theoryStates = report::stateTotal(r.theoryModelStatesOf(worst.rank));
        char savings[32];
        std::snprintf(savings, sizeof savings, "%.2f×/%.2f×",
                      ddpStates / static_cast<double>(states),
                      ddpTheory / static_cast<double>(theoryStates));
        const double maxDelta = r.maxAbsDeltaVsDdp.value_or(0.0);
        char delta[32];
        std::snprintf(delta, sizeof delta, maxDelta == 0 ? "0 (bitwise)" : "%.3g", maxDelta);
        // Exposed communication: the median share of a step the most-waiting rank spent in
        // collectives no compute hid.
        char exposed[16];
        std::snprintf(exposed, sizeof exposed, "%.1f%%", 100.0 * r.exposedCommFraction);
        std::printf("%-13s %13llu %13llu %6s %15s %13llu %13llu %9.2f %8s %12s\n",
                    r.strategy.c_str(), static_cast<unsigned long long>(states),
                    static_cast<unsigned long long>(theoryStates),
                    states == theoryStates ? "yes" : "NO", savings,
                    static_cast<unsigned long long>(kindsTotal(r.commBytesPerStep)),
                    static_cast<unsigned long long>(kindsTotal(r.theory.commBytesPerStep)),
                    medianStepMs(r), exposed, delta);
    }
    std::printf("\nper-rank peak by category (the rank with the largest peak; bytes):\n%-13s",
                "strategy");
    for (Category cat : kAllCategories)
        std::printf(" %11s", std::string(categoryName(cat)).c_str());
    std::printf(" %11s %11s\n", "peak", "predicted");
    for (const report::RunReport& r : c.strategies) {
        const report::RankReport& worst = r.worstRank();
        std::printf("%-13s", r.strategy.c_str());
        for (Category cat : kAllCategories)
            std::printf(" %11llu", static_cast<unsigned long long>(worst.peakBytes[index(cat)]));
        std::printf(" %11llu %11llu\n", static_cast<unsigned long long>(worst.peakTotal),
                    static_cast<unsigned long long>(r.predictedPeakOf(worst.rank)));
    }
}

report::CompareReport readReportFile(const std::string& path) {
    // A report is a few hundred KiB at most; a file far past that is not one. Regular files
    // only: a FIFO or device would block or never end.
    constexpr std::uint64_t kMaxBytes = std::uint64_t{64} << 20;
    const auto [fd, size] = openInputFile(path, "FILE", 0, kMaxBytes);
    std::string text(static_cast<std::size_t>(size), '\0');
    std::size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = ::read(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        done += static_cast<std::size_t>(n);
    }
    ::close(fd);
    text.resize(done);
    report::Parsed<report::CompareReport> parsed = report::parseCompareReport(text);
    if (!parsed) throw Error(ErrorKind::Format, path + ": " + parsed.error);
    return std::move(*parsed.value);
}

} // namespace shardscope::cli
