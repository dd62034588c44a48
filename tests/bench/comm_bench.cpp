// Our collectives against raw MPI in the same job, side by side (run under mpirun -np N).
// For each size: busbw of MPI_Allgather vs Communicator::allGather and of
// MPI_Reduce_scatter_block vs Communicator::reduceScatter, and the ratio ours / raw
// (goal ≥ 0.9); also the prefetch path (startAllGather + finishAllGather) against raw. busbw
// follows nccl-tests (plan/collective.h): algbw = size / time, busbw = algbw × the kind's factor.
// Each timing is the slowest rank's (MPI_MAX), the median over the repetitions.
// Tensor parallelism: Communicator::tpAllReduce over TP groups of T = 2 consecutive ranks (the
// worker's MPI_Comm_split) against MPI_Allreduce on the same split, busbw with 2(T−1)/T.
#include "comm/mpi_communicator.h"
#include "core/ledger.h"
#include "device/cpu_device.h"
#include "device/device.h"
#include "plan/collective.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <mpi.h>
#include <vector>

using namespace shardscope;

namespace {

double medianSeconds(const std::function<void()>& op, int reps) {
    std::vector<double> times;
    op(); // warm-up: connections, page faults
    for (int i = 0; i < reps; ++i) {
        MPI_Barrier(MPI_COMM_WORLD);
        const double t0 = MPI_Wtime();
        op();
        double dt = MPI_Wtime() - t0, slowest = 0;
        MPI_Allreduce(&dt, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        times.push_back(slowest);
    }
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
}

double busbwGBs(CollectiveOp op, std::size_t bytes, double seconds, int n) {
    return plan::busBandwidth(op, bytes, seconds, n) / 1e9;
}

// TP all-reduce (T = 2, fp32) on our split communicator vs raw MPI on an identical split.
void tensorParallel(int rank, device::Device& dev, int reps) {
    constexpr int t = 2;
    auto tp = comm::makeMpiSplitCommunicator(&dev, rank / t, rank);
    MPI_Comm raw;
    MPI_Comm_split(MPI_COMM_WORLD, rank / t, rank, &raw);
    if (rank == 0) {
        std::printf("\ntensor-parallel all-reduce, TP groups of %d ranks, busbw in GB/s\n", t);
        std::printf("%10s  %12s %12s %7s\n", "size", "AR raw", "TP ours", "ratio");
    }
    for (std::size_t mib : {1, 4, 16, 64}) {
        const std::size_t bytes = mib << 20;
        std::vector<float> data(bytes / 4, 1.0f);
        const int c = static_cast<int>(data.size());
        const double arRaw = medianSeconds(
            [&] { MPI_Allreduce(MPI_IN_PLACE, data.data(), c, MPI_FLOAT, MPI_SUM, raw); }, reps);
        const double arOurs = medianSeconds(
            [&] { tp->tpAllReduce(data.data(), data.size(), comm::DType::F32, 0); }, reps);
        if (rank == 0)
            std::printf("%7zu MiB  %12.3f %12.3f %7.3f\n", mib,
                        busbwGBs(CollectiveOp::TpAllReduce, bytes, arRaw, t),
                        busbwGBs(CollectiveOp::TpAllReduce, bytes, arOurs, t), arRaw / arOurs);
    }
    MPI_Comm_free(&raw);
}

} // namespace

int main(int argc, char** argv) {
    comm::MpiRuntime mpi(&argc, &argv);
    Ledger ledger(mpi.worldRank());
    device::CpuDevice dev(ledger);
    auto comm = comm::makeMpiWorldCommunicator(&dev);
    const int n = mpi.worldSize();
    const int reps = argc > 1 ? std::max(3, std::atoi(argv[1])) : 9;
    if (mpi.worldRank() == 0) {
        std::printf("collectives, %d ranks, median of %d (slowest rank), busbw in GB/s\n", n, reps);
        std::printf("%10s  %12s %12s %7s  %12s %7s  %12s %12s %7s\n", "size", "AG raw", "AG ours",
                    "ratio", "AG started", "ratio", "RS raw", "RS ours", "ratio");
    }
    for (std::size_t mib : {1, 4, 16, 64}) {
        const std::size_t fullBytes = mib << 20;
        const std::size_t count = fullBytes / 4 / static_cast<std::size_t>(n); // fp32 per shard
        std::vector<float> shard(count, 1.0f), full(count * static_cast<std::size_t>(n), 1.0f);
        const int c = static_cast<int>(count);
        const double agRaw = medianSeconds(
            [&] {
                MPI_Allgather(shard.data(), c, MPI_FLOAT, full.data(), c, MPI_FLOAT,
                              MPI_COMM_WORLD);
            },
            reps);
        const double agOurs = medianSeconds(
            [&] { comm->allGather(shard.data(), full.data(), count, comm::DType::F32, 0); }, reps);
        const double agStarted = medianSeconds(
            [&] {
                comm->finishAllGather(
                    comm->startAllGather(shard.data(), full.data(), count, comm::DType::F32, 0));
            },
            reps);
        const double rsRaw = medianSeconds(
            [&] {
                MPI_Reduce_scatter_block(full.data(), shard.data(), c, MPI_FLOAT, MPI_SUM,
                                         MPI_COMM_WORLD);
            },
            reps);
        const double rsOurs = medianSeconds(
            [&] { comm->reduceScatter(full.data(), shard.data(), count, comm::DType::F32, 0); },
            reps);
        if (mpi.worldRank() == 0) {
            const std::size_t bytes = count * 4 * static_cast<std::size_t>(n);
            constexpr CollectiveOp ag = CollectiveOp::AllGather, rs = CollectiveOp::ReduceScatter;
            std::printf("%7zu MiB  %12.3f %12.3f %7.3f  %12.3f %7.3f  %12.3f %12.3f %7.3f\n", mib,
                        busbwGBs(ag, bytes, agRaw, n), busbwGBs(ag, bytes, agOurs, n),
                        agRaw / agOurs, busbwGBs(ag, bytes, agStarted, n), agRaw / agStarted,
                        busbwGBs(rs, bytes, rsRaw, n), busbwGBs(rs, bytes, rsOurs, n),
                        rsRaw / rsOurs);
        }
    }
    if (n % 2 == 0) tensorParallel(mpi.worldRank(), dev, reps);
    return 0;
}
