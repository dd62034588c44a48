// The CPU performance goals measured in one run, each as a ratio against a figure measured in
// the same run (never an absolute time): usage
//   shardscope_bench_goals [--repeats R] [--steps K] [--ranks N] [--no-cli]
// 1. the small GPT's whole fp32 step (one rank, 512 tokens) in GFLOP/s against single-thread
//    sgemm through the same engine (kernels::gemm: oneDNN or OpenBLAS; FLOPs: 6 × matmul params
//    × tokens + 12 · layers · d · seq · tokens for attention);
// 2. optimizer + clipping + grad norm (the step's Optimizer span) against the STREAM-triad bound
//    of AdamW's 28 bytes per parameter;
// 3. bf16 against fp32 step time at one rank (here) and at N ranks (through shardscope-cli): at
//    least 2.5× where the GEMMs run on AMX tiles, never slower elsewhere;
// 4. tracing on (events streamed and recorded) against --no-events through the CLI (one rank)
//    and under mpirun (N ranks): step-time throughput, and the whole job's CPU time (CLI, mpirun
//    and ranks), which shows the consumer's share even where the cores are busy with other work.
// Every pair is interleaved (A B A B …) so machine noise hits both sides; min and median of the
// repeats are printed with the target. Within a repeat, the sgemm reference is the best of three
// runs and each step figure the best of three interleaved steps (fp32, bf16, fp32, …). In-process
// figures (1–3 at one rank) use this thread's CPU time; the CLI figures the reports' step times
// (wall clock: run them on a quiet machine).
#include "core/event.h"
#include "core/ledger.h"
#include "device/cpu_device.h"
#include "kernels/cpu/gemm.h"
#include "model/data.h"
#include "report/report.h"
#include "runconfig/presets.h"
#include "train/trainer.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <sys/resource.h>
#include <unistd.h>
#include <vector>

namespace {

using namespace shardscope;
namespace fs = std::filesystem;

double seconds(std::uint64_t ns) {
    return static_cast<double>(ns) * 1e-9;
}

// The in-process figures are timed in this thread's CPU time (page faults included), so that
// other processes sharing the cores do not count; on an idle machine it equals wall time.
std::uint64_t cpuNs() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000u +
           static_cast<std::uint64_t>(ts.tv_nsec);
}

struct Stats {
    double min = 0, median = 0;
};
Stats stats(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    if (v.empty()) return {};
    const std::size_t h = v.size() / 2;
    return {v.front(), v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h])};
}

// Single-thread sgemm, C = A·B with 512 × 1024 × 1024 (the step's GEMMs are of that order).
double sgemmGflops() {
    const std::int64_t m = 512, n = 1024, k = 1024;
    std::vector<float> a(static_cast<std::size_t>(m * k), 0.5f),
        b(static_cast<std::size_t>(k * n), 0.25f), c(static_cast<std::size_t>(m * n));
    double best = 0;
    for (int r = 0; r < 3; ++r) {
        const std::uint64_t t0 = cpuNs();
        kernels::gemm(false, false, m, n, k, 1.0f, a.data(), k, b.data(), n, 0.0f, c.data(), n);
        best = std::max(best, 2.0 * m * n * k / seconds(cpuNs() - t0) * 1e-9);
    }
    return best;
}

// STREAM triad a = b + s·c over arrays far beyond the caches, in bytes/s (3 × 4 bytes per element).
double triadBytesPerSecond() {
    const std::size_t n = std::size_t{1} << 24;
    std::vector<float> a(n), b(n, 1.0f), c(n, 2.0f);
    double best = 0;
    for (int r = 0; r < 3; ++r) {
        const std::uint64_t t0 = cpuNs();
        for (std::size_t i = 0; i < n; ++i)
            a[i] = b[i] + 3.0f * c[i];
        best = std::max(best, 12.0 * static_cast<double>(n) / seconds(cpuNs() - t0));
        if (a[n / 2] != 7.0f) std::abort();
    }
    return best;
}

// One rank of the small preset on the CPU device; the Optimizer span's time is taken from the
// trainer's own events.
struct Rig {
    explicit Rig(plan::PrecisionKind precision)
        : p(runconfig::modelPreset("small")), cpu(ledger),
          data(p.shape.vocab, p.shape.seqLen, p.microBatch, 1) {
        train::TrainConfig cfg;
        cfg.model = {p.shape, p.microBatch, false};
        cfg.precision = precision;
        // As the worker resolves it: bf16 linear layers where the CPU has bf16 units.
        cfg.bf16Gemm = precision == plan::PrecisionKind::MixedBf16 && kernels::nativeBf16Gemm();
        cfg.optimizer.learningRate = p.learningRate;
        ledger.setSink([this](const Event& e) {
            if (e.phase != Phase::Optimizer) return;
            if (e.kind == EventKind::ComputeBegin) optBegin = cpuNs();
            if (e.kind == EventKind::ComputeEnd) optNs = cpuNs() - optBegin;
        });
        trainer = std::make_unique<train::Trainer>(cfg, cpu, data);
        trainer->step(); // warm-up: first touch of every buffer
    }
    // Returns the step's seconds; optimizer() the last Optimizer span's.
    double step() {
        const std::uint64_t t0 = cpuNs();
        trainer->step();
        return seconds(cpuNs() - t0);
    }
    double optimizer() const { return seconds(optNs); }

    runconfig::ModelPreset p;
    Ledger ledger;
    device::CpuDevice cpu;
    model::MarkovSource data;
    std::unique_ptr<train::Trainer> trainer;
    std::uint64_t optBegin = 0, optNs = 0;
};

double stepFlops(const plan::GptShape& s, std::int64_t tokens) {
    const double d = static_cast<double>(s.dModel), layers = static_cast<double>(s.layers);
    const double matmulParams = layers * 12.0 * d * d + d * static_cast<double>(s.vocab);
    return 6.0 * matmulParams * static_cast<double>(tokens) +
           12.0 * layers * d * static_cast<double>(s.seqLen) * static_cast<double>(tokens);
}

void line(const char* goal, const char* what, Stats s, const char* unit, const char* target,
          bool met) {
    std::printf("%-3s %-44s min %8.3f  median %8.3f %-8s target %-8s %s\n", goal, what, s.min,
                s.median, unit, target, met ? "holds" : "NOT MET");
}

// CPU seconds (user + system) of the finished children: the CLI, mpirun and every rank.
double childCpuSeconds() {
    rusage u{};
    getrusage(RUSAGE_CHILDREN, &u);
    const auto sec = [](const timeval& t) {
        return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6;
    };
    return sec(u.ru_utime) + sec(u.ru_stime);
}

struct CliRun {
    double stepSeconds = 0; // median step time (steps after the first); 0 when the run failed
    double cpuSeconds = 0;  // the whole job's CPU time, every process of it
};

CliRun cliRun(const std::string& cli, const std::string& args, const fs::path& json) {
    const std::string cmd =
        "'" + cli + "' run " + args + " --json '" + json.string() + "' >/dev/null 2>&1";
    const double cpu0 = childCpuSeconds();
    if (std::system(cmd.c_str()) != 0) return {};
    const double cpu = childCpuSeconds() - cpu0;
    std::ifstream in(json);
    std::stringstream text;
    text << in.rdbuf();
    const auto r = report::parseRunReport(text.str());
    if (!r || r.value->stepMs.size() < 2) return {};
    std::vector<double> ms(r.value->stepMs.begin() + 1, r.value->stepMs.end());
    return {stats(ms).median * 1e-3, cpu};
}

// Interleaved A/B pairs: B's throughput relative to A's (time A / time B) from the reports'
// step times, and the jobs' CPU time A / B (1 = B adds no work on any process).
struct Pairs {
    std::vector<double> throughput, cpu;
};
Pairs cliPairs(const std::string& cli, const std::string& a, const std::string& b, int repeats,
               const fs::path& dir) {
    Pairs p;
    for (int r = 0; r < repeats; ++r) {
        const CliRun ra = cliRun(cli, a, dir / "a.json");
        const CliRun rb = cliRun(cli, b, dir / "b.json");
        if (ra.stepSeconds <= 0 || rb.stepSeconds <= 0) continue;
        p.throughput.push_back(ra.stepSeconds / rb.stepSeconds);
        p.cpu.push_back(ra.cpuSeconds / rb.cpuSeconds);
    }
    return p;
}

} // namespace

int main(int argc, char** argv) {
    std::setvbuf(stdout, nullptr, _IOLBF, 0); // progress lines as they come, also into a file
    int repeats = 5, steps = 6, ranks = 4;
    bool cli = true;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--repeats" && i + 1 < argc)
            repeats = std::clamp(std::atoi(argv[++i]), 1, 1000);
        else if (a == "--steps" && i + 1 < argc)
            steps = std::clamp(std::atoi(argv[++i]), 3, 1000);
        else if (a == "--ranks" && i + 1 < argc)
            ranks = std::clamp(std::atoi(argv[++i]), 2, 64);
        else if (a == "--no-cli")
            cli = false;
        else {
            std::fprintf(stderr, "shardscope_bench_goals: unknown argument %s\n", a.c_str());
            return 2;
        }
    }
    kernels::setBlasThreads(1);    // one compute thread per rank, as the worker
    device::keepFreedHostMemory(); // as the worker
    std::printf("gemm %s (blas core %s, %d thread(s)); small preset, one rank, %d interleaved "
                "repeats\n",
                kernels::gemmEngine().c_str(), kernels::blasCoreName().c_str(),
                kernels::blasThreads(), repeats);
    // bf16 on AMX tiles: the GEMMs' share falls ~7×, so the whole step 2.5× (the goal);
    // elsewhere bf16 is never slower than fp32.
    const bool amx = kernels::gemmEngine().find("amx") != std::string::npos;
    const double bf16Target = amx ? 2.5 : 1.0;

    Rig fp32(plan::PrecisionKind::Fp32), bf16(plan::PrecisionKind::MixedBf16);
    const double flops = stepFlops(fp32.p.shape, fp32.trainer->model().tokensPerBatch());
    const double params = static_cast<double>(fp32.trainer->paramCount());
    std::vector<double> gemmFraction, optBoundFp32, optBoundBf16, bf16Speed;
    double sgemm = 0, triad = 0, stepRate = 0;
    for (int r = 0; r < repeats; ++r) {
        sgemm = sgemmGflops();
        triad = triadBytesPerSecond();
        // Best of three interleaved steps each, as the sgemm reference is the best of three runs.
        double tf = 1e30, tb = 1e30, optF = 0, optB = 0;
        for (int k = 0; k < 3; ++k) {
            const double f = fp32.step();
            if (f < tf) tf = f, optF = fp32.optimizer();
            const double b = bf16.step();
            if (b < tb) tb = b, optB = bf16.optimizer();
        }
        stepRate = flops / tf * 1e-9;
        gemmFraction.push_back(stepRate / sgemm);
        const double bound = 28.0 * params / triad;
        optBoundFp32.push_back(optF / bound);
        optBoundBf16.push_back(optB / bound);
        bf16Speed.push_back(tf / tb);
        std::printf("  repeat %d: sgemm %.1f GFLOP/s, triad %.1f GB/s, fp32 step %.1f ms (%.1f "
                    "GFLOP/s, optimizer "
                    "%.2f ms), bf16 step %.1f ms (optimizer %.2f ms), bound %.2f ms\n",
                    r + 1, sgemm, triad * 1e-9, tf * 1e3, stepRate, optF * 1e3, tb * 1e3,
                    optB * 1e3, bound * 1e3);
    }
    const Stats g1 = stats(gemmFraction), g2f = stats(optBoundFp32), g2b = stats(optBoundBf16),
                g3 = stats(bf16Speed);
    line("1", "fp32 step GFLOP/s / sgemm GFLOP/s", g1, "x", ">= 0.75", g1.median >= 0.75);
    line("2", "optimizer+clip+norm / triad bound (fp32)", g2f, "x", "<= 2.0", g2f.median <= 2.0);
    line("2", "optimizer+clip+norm / triad bound (bf16)", g2b, "x", "<= 2.0", g2b.median <= 2.0);
    line("3", "bf16 / fp32 throughput, 1 rank", g3, "x", amx ? ">= 2.5" : ">= 1.0",
         g3.median >= bf16Target);
    if (!cli) return 0;

    const fs::path self = fs::canonical(fs::path(argv[0])).parent_path();
    const std::string exe = (self / "shardscope-cli").string();
    if (!fs::exists(exe)) {
        std::printf("goals 3 (N ranks) and 4: not run, %s is missing\n", exe.c_str());
        return 0;
    }
    const fs::path dir =
        fs::temp_directory_path() / ("shardscope-goals-" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const std::string base = "--model small --steps " + std::to_string(steps) + " --strategy zero3";
    const std::string n = " --ranks " + std::to_string(ranks);
    const std::string trace = " --trace '" + (dir / "t.sstrace").string() + "'";
    const std::string nRanks = std::to_string(ranks) + " ranks";
    const Pairs p3 =
        cliPairs(exe, base + n + " --precision fp32", base + n + " --precision bf16", repeats, dir);
    const Stats g3n = stats(p3.throughput);
    line("3", ("bf16 / fp32 throughput, " + nRanks).c_str(), g3n, "x", ">= 1.0", g3n.median >= 1.0);
    const Pairs p4a =
        cliPairs(exe, base + " --ranks 1 --no-events", base + " --ranks 1" + trace, repeats, dir);
    const Stats g4a = stats(p4a.throughput);
    line("4", "tracing on / off throughput, CLI, 1 rank", g4a, "x", ">= 0.98", g4a.median >= 0.98);
    const Stats c4a = stats(p4a.cpu);
    line("4", "  job CPU time off / on, CLI, 1 rank", c4a, "x", ">= 0.98", c4a.median >= 0.98);
    const Pairs p4b = cliPairs(exe, base + n + " --no-events", base + n + trace, repeats, dir);
    const Stats g4b = stats(p4b.throughput);
    line("4", ("tracing on / off throughput, mpirun, " + nRanks).c_str(), g4b, "x", ">= 0.98",
         g4b.median >= 0.98);
    const Stats c4b = stats(p4b.cpu);
    line("4", ("  job CPU time off / on, mpirun, " + nRanks).c_str(), c4b, "x", ">= 0.98",
         c4b.median >= 0.98);
    fs::remove_all(dir);
    return 0;
}
