// Tensor parallelism in one job (a plain MPI program, run under mpirun -np 4; usage
//   shardscope_bench_tp [--repeats R] [--steps K] [--model PRESET] [--strategy S]):
// 1. Communicator::tpAllReduce on TP groups of T = 2 and T = 4 consecutive ranks (the worker's
//    MPI_Comm_split) against MPI_Allreduce on an identical split, fp32, 64 KiB … 64 MiB. Each
//    repeat times both (the order alternates, so drift hits both sides); a time is the slowest
//    rank's (MPI_MAX). busbw follows nccl-tests: algbw × 2(T−1)/T (plan/collective.h). The ratio
//    ours / raw is taken per repeat; min and median are printed with the goal (≥ 0.9 at ≥ 1 MiB).
// 2. The same model on the same 4 ranks as T = 2 × D = 2 and as T = 1 × D = 4 (default
//    small_tp, ZeRO-3): both trainers live side by side and step alternately; per step the
//    slowest rank's step time and the largest per-rank exposed-communication fraction
//    (train/overlap.h, the report's exposed_comm_fraction: TP all-reduces are blocking, so they
//    count in full), and the share of the step spent in TP all-reduces.
#include "comm/mpi_communicator.h"
#include "core/ledger.h"
#include "device/cpu_device.h"
#include "kernels/cpu/gemm.h"
#include "plan/collective.h"
#include "strategy/sharding.h"
#include "train/overlap.h"
#include "train/run_config.h"
#include "train/trainer.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <mpi.h>
#include <string>
#include <vector>

using namespace shardscope;

namespace {

struct Stats {
    double min = 0, median = 0;
};
Stats stats(std::vector<double> v) {
    if (v.empty()) return {};
    std::sort(v.begin(), v.end());
    const std::size_t h = v.size() / 2;
    return {v.front(), v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h])};
}

double slowest(double seconds) {
    double out = 0;
    MPI_Allreduce(&seconds, &out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return out;
}

double timed(const std::function<void()>& op) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    op();
    return slowest(MPI_Wtime() - t0);
}

void allReduceTable(int rank, int t, device::Device& dev, int repeats) {
    auto ours = comm::makeMpiSplitCommunicator(&dev, rank / t, rank);
    MPI_Comm raw;
    MPI_Comm_split(MPI_COMM_WORLD, rank / t, rank, &raw);
    if (rank == 0) {
        std::printf("\nTP all-reduce, groups of T = %d ranks, fp32, busbw GB/s (median), ratio "
                    "ours / raw\n",
                    t);
        std::printf("%9s  %9s %9s  %9s %9s  %s\n", "size", "raw", "ours", "min", "median",
                    "goal >= 0.9 at >= 1 MiB");
    }
    for (std::size_t kib : {64, 256, 1024, 4096, 16384, 65536}) {
        const std::size_t bytes = kib << 10;
        std::vector<float> data(bytes / 4, 1.0f / static_cast<float>(t));
        const int count = static_cast<int>(data.size());
        const auto rawOp = [&] {
            MPI_Allreduce(MPI_IN_PLACE, data.data(), count, MPI_FLOAT, MPI_SUM, raw);
        };
        const auto oursOp = [&] {
            ours->tpAllReduce(data.data(), data.size(), comm::DType::F32, 0);
        };
        rawOp(); // warm-up: connections, page faults, both paths
        oursOp();
        std::vector<double> rawBw, oursBw, ratio;
        for (int r = 0; r < repeats; ++r) {
            double tr = 0, to = 0;
            if (r % 2 == 0) {
                tr = timed(rawOp);
                to = timed(oursOp);
            } else {
                to = timed(oursOp);
                tr = timed(rawOp);
            }
            rawBw.push_back(plan::busBandwidth(CollectiveOp::TpAllReduce, bytes, tr, t) / 1e9);
            oursBw.push_back(plan::busBandwidth(CollectiveOp::TpAllReduce, bytes, to, t) / 1e9);
            ratio.push_back(tr / to);
        }
        if (rank != 0) continue;
        const Stats q = stats(ratio);
        const char* verdict = kib < 1024 ? "" : q.median >= 0.9 ? "holds" : "NOT MET";
        std::printf("%5zu %s  %9.3f %9.3f  %9.3f %9.3f  %s\n", kib >= 1024 ? kib >> 10 : kib,
                    kib >= 1024 ? "MiB" : "KiB", stats(rawBw).median, stats(oursBw).median, q.min,
                    q.median, verdict);
    }
    MPI_Comm_free(&raw);
}

// One configuration of the 4 ranks: its own device and ledger (so its events feed its own
// overlap tracker), its communicators and its trainer.
struct MeshRig {
    MeshRig(const std::vector<std::string>& args, int rank, int size)
        : config(train::parseRunConfig(args, size)), ledger(rank), cpu(ledger) {
        const int t = config.tensorParallel;
        world = comm::makeMpiWorldCommunicator(&cpu);
        groups.world = groups.shard = world.get();
        if (t > 1) {
            tensor = comm::makeMpiSplitCommunicator(&cpu, rank / t, rank);
            data = comm::makeMpiSplitCommunicator(&cpu, rank % t, rank);
            groups.tensor = tensor.get();
            groups.data = groups.shard = data.get();
        }
        ledger.setSink([this](const Event& e) {
            tracker.onEvent(e);
            if (e.collective != CollectiveOp::TpAllReduce) return;
            if (e.kind == EventKind::CollectiveBegin) tpBegin = e.timeNs;
            if (e.kind == EventKind::CollectiveEnd) tpNs += e.timeNs - tpBegin;
        });
        source = train::makeDataSource(config);
        sharding = strategy::makeSharding(train::strategyConfigOf(config), cpu, groups);
        trainer = std::make_unique<train::Trainer>(train::trainConfigOf(config), cpu, *source,
                                                   sharding.get());
    }
    // Steps once; returns the slowest rank's seconds and adds the step's figures.
    void step() {
        tpNs = 0;
        const double seconds = timed([&] { trainer->step(); });
        stepSeconds.push_back(seconds);
        exposed.push_back(slowest(tracker.steps().back().fraction()));
        tpShare.push_back(slowest(static_cast<double>(tpNs) * 1e-9) / seconds);
    }

    train::RunConfig config;
    Ledger ledger;
    device::CpuDevice cpu;
    std::unique_ptr<comm::Communicator> world, tensor, data;
    strategy::CommGroups groups;
    std::unique_ptr<model::DataSource> source;
    std::unique_ptr<strategy::Sharding> sharding;
    std::unique_ptr<train::Trainer> trainer;
    train::OverlapTracker tracker;
    std::uint64_t tpBegin = 0, tpNs = 0;
    std::vector<double> stepSeconds, exposed, tpShare;
};

void meshTable(int rank, int size, const std::string& model, const std::string& strategy,
               int steps) {
    const std::vector<std::string> common = {"--model", model,     "--strategy",
                                             strategy,  "--steps", std::to_string(steps)};
    std::vector<std::string> tpArgs = common;
    tpArgs.insert(tpArgs.end(), {"--tp", "2"});
    MeshRig tp(tpArgs, rank, size), dp(common, rank, size);
    tp.step(); // warm-up: first touch of every buffer
    dp.step();
    tp.stepSeconds.clear(), tp.exposed.clear(), tp.tpShare.clear();
    dp.stepSeconds.clear(), dp.exposed.clear(), dp.tpShare.clear();
    for (int k = 0; k < steps; ++k) {
        tp.step();
        dp.step();
    }
    if (rank != 0) return;
    std::vector<double> ratio;
    for (int k = 0; k < steps; ++k)
        ratio.push_back(dp.stepSeconds[static_cast<std::size_t>(k)] /
                        tp.stepSeconds[static_cast<std::size_t>(k)]);
    std::printf("\n%s, %s, %d ranks, %d interleaved steps (slowest rank; exposed: the rank that "
                "waits most)\n",
                model.c_str(), strategy.c_str(), size, steps);
    std::printf("%-13s  %21s  %21s  %21s\n", "mesh", "step ms min / median", "exposed comm min/med",
                "TP all-reduce share");
    for (const MeshRig* m : {&tp, &dp}) {
        const Stats s = stats(m->stepSeconds), e = stats(m->exposed), p = stats(m->tpShare);
        std::printf("T = %d x D = %d  %9.1f / %9.1f  %9.3f / %9.3f  %9.3f / %9.3f\n",
                    m->config.tensorParallel, m->config.dataParallel(), s.min * 1e3, s.median * 1e3,
                    e.min, e.median, p.min, p.median);
    }
    const Stats r = stats(ratio);
    std::printf("step time (T = 1 x D = 4) / (T = 2 x D = 2): min %.3f, median %.3f\n", r.min,
                r.median);
}

} // namespace

int main(int argc, char** argv) {
    comm::MpiRuntime mpi(&argc, &argv);
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    int repeats = 9, steps = 6;
    std::string model = "small_tp", strategy = "zero3";
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--repeats" && i + 1 < argc)
            repeats = std::clamp(std::atoi(argv[++i]), 3, 1000);
        else if (a == "--steps" && i + 1 < argc)
            steps = std::clamp(std::atoi(argv[++i]), 1, 1000);
        else if (a == "--model" && i + 1 < argc)
            model = argv[++i];
        else if (a == "--strategy" && i + 1 < argc)
            strategy = argv[++i];
        else {
            if (mpi.worldRank() == 0)
                std::fprintf(stderr, "shardscope_bench_tp: unknown argument %s\n", a.c_str());
            return 2;
        }
    }
    kernels::setBlasThreads(1); // one compute thread per rank, as the worker
    device::keepFreedHostMemory();
    const int rank = mpi.worldRank(), size = mpi.worldSize();
    if (rank == 0) std::printf("shardscope_bench_tp: %d ranks, %d repeats\n", size, repeats);
    Ledger ledger(rank);
    device::CpuDevice dev(ledger);
    for (int t : {2, 4})
        if (size % t == 0) allReduceTable(rank, t, dev, repeats);
    if (size == 4) {
        try {
            meshTable(rank, size, model, strategy, steps);
        } catch (const std::exception& e) {
            std::fprintf(stderr, "shardscope_bench_tp: rank %d: %s\n", rank, e.what());
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    } else if (rank == 0) {
        std::printf(
            "\nstep time of T = 2 x D = 2 vs T = 1 x D = 4: needs 4 ranks (mpirun -np 4)\n");
    }
    return 0;
}
