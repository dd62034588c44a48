// shardscope-worker: the ranks of a training job. Under mpirun each process is one rank; with
// --shared-device --ranks N one process runs N rank threads (no mpirun). Parses the run
// configuration, trains with the chosen strategy on the chosen backend, and batches each step's
// events to rank 0, which writes the stream (the parent's socket) and/or the recording, then
// the report.
//
// With --predict REQUEST it trains nothing: it prints the dry run's predicted peak of each
// scenario in the request (jobs.h: runPredict), for `shardscope-cli estimate`.
//
// Errors: a bad configuration, or a backend this machine or build cannot run, is one line
// "shardscope-worker: <message>" (rank 0) and exit 2 on every rank; an error inside a rank (out
// of memory against --capacity, a collective timeout, anything) is one line
// "shardscope-worker: rank R, step S: <message>" (S from 1, or "setup"), a Failure record when
// rank 0's stream is reachable, and exit 1 (under mpirun: MPI_Abort, so the whole job ends;
// OpenMPI's own multi-line MPI_ABORT notice is switched off, the one line says it all).
// A checkpoint to resume whose data turns out damaged while the ranks load it is bad input:
// one line naming the file, exit 2 (train::CheckpointError).
#include "backends.h"
#include "checkpoint/store.h"
#include "comm/mpi_communicator.h"
#include "core/error.h"
#include "device/cpu_device.h"
#include "jobs.h"
#include "kernels/cpu/gemm.h"
#include "rank.h"
#include "train/run_config.h"

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <sys/prctl.h>
#include <vector>

using namespace shardscope;

namespace {

// mpirun (OpenMPI, or a PMI/PMIx launcher) exports these to every process it starts.
constexpr const char* kUsage =
    "usage: shardscope-worker --model PRESET --strategy S --steps K [flags]\n"
    "  The ranks of one training job, started by shardscope-cli or the GUI (under mpirun, one\n"
    "  process per rank; with --shared-device --ranks N, N rank threads in one process).\n"
    "  Flags (runconfig/run_config.h):\n";
constexpr const char* kUsageTail =
    "usage: shardscope-worker --predict REQUEST\n"
    "  Trains nothing: prints the dry run's predicted peak of each scenario in REQUEST (JSON, as\n"
    "  shardscope-cli estimate writes it) on stdout.\n";

bool startedByMpirun() {
    for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK"})
        if (std::getenv(v)) return true;
    return false;
}

int refuse(int rank, const Error& e) {
    if (rank == 0) std::fprintf(stderr, "shardscope-worker: %s\n", e.what());
    return e.isUserInput() ? 2 : 1;
}

// --backend cuda on every rank: each probes its own GPUs, and they agree before any GPU work
// so that all exit 2 together (rank 0 says why, naming another rank when it was that one's
// machine), instead of some ranks waiting in collectives for ranks that left.
std::optional<std::string> agreedBackendProblem(const train::RunConfig& config, int rank,
                                                int size) {
    std::optional<std::string> mine = worker::backendUnavailable(config);
    if (size == 1 || config.backend == train::Backend::Cpu) return mine;
    const std::unique_ptr<comm::Communicator> world = comm::makeMpiWorldCommunicator(nullptr);
    const std::vector<std::string> all = world->gatherBytes(mine.value_or(""), 0);
    const bool anyone = world->maxScalar(mine ? 1.0 : 0.0) > 0.0;
    if (!anyone) return std::nullopt;
    if (rank != 0) return std::string(); // rank 0 prints
    for (std::size_t r = 0; r < all.size(); ++r)
        if (!all[r].empty()) return r == 0 ? all[r] : "rank " + std::to_string(r) + ": " + all[r];
    return std::string("--backend cuda: unavailable");
}

// Started by shardscope-cli (or the GUI through it): the CLI gives every rank the same --stream
// (its socket), holds the --save folder's lock and ends the job on a signal itself. Decided from
// the flags, which every rank has alike — an environment variable does not reach remote hosts.
bool supervisedByTheCli(const train::RunConfig& config) {
    return config.streamPath.has_value();
}

// --save run directly (no shardscope-cli): the process of rank 0 holds the folder's lock, and
// every rank agrees before training, so that all exit 2 together when another job saves there.
std::optional<std::string> agreedSaveLock(const train::RunConfig& config, int rank, int size,
                                          std::optional<checkpoint::SaveFolderLock>& lock) {
    if (!config.saveDir || supervisedByTheCli(config)) return std::nullopt;
    std::optional<std::string> mine;
    if (rank == 0) {
        try {
            lock.emplace(*config.saveDir);
            for (const std::string& left : lock->swept())
                std::fprintf(
                    stderr,
                    "shardscope-worker: note: removed %s, left by a save that did not finish\n",
                    left.c_str());
        } catch (const Error& e) {
            mine = e.what();
        }
    }
    if (size == 1) return mine;
    const std::unique_ptr<comm::Communicator> world = comm::makeMpiWorldCommunicator(nullptr);
    if (world->maxScalar(mine ? 1.0 : 0.0) == 0.0) return std::nullopt;
    return rank == 0 ? mine : std::string(); // rank 0 prints
}

// bf16 linear layers on the CPU's bf16 units (kernels/cpu/gemm.h) where every rank's CPU has
// them: ranks on different machines must round alike, and rank 0's prediction counts the same
// workspace as every rank's run.
bool agreedBf16Gemm(const train::RunConfig& config, int size) {
    (void)kernels::gemmEngine(); // a bad SHARDSCOPE_GEMM is refused here, before any rank starts
    const bool mine = config.backend == runconfig::Backend::Cpu &&
                      config.precision == plan::PrecisionKind::MixedBf16 &&
                      kernels::nativeBf16Gemm();
    if (size == 1 || config.sharedDevice) return mine;
    const std::unique_ptr<comm::Communicator> world = comm::makeMpiWorldCommunicator(nullptr);
    return world->maxScalar(mine ? 0.0 : 1.0) == 0.0; // no rank without
}

} // namespace

int main(int argc, char** argv) {
    // A rank never outlives whoever started it (mpirun, or the CLI for a direct worker): were
    // that killed with SIGKILL, the rank would otherwise train on for nobody.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    // One core per rank: mpirun places the processes; a shared-device job runs one thread per
    // rank, each of which calls BLAS itself.
    kernels::setBlasThreads(1);
    device::keepFreedHostMemory();
    const std::vector<std::string> args(argv + 1, argv + argc);
    if (std::find(args.begin(), args.end(), "--help") != args.end() ||
        std::find(args.begin(), args.end(), "-h") != args.end()) {
        std::fputs(kUsage, stdout);
        std::fputs(runconfig::workerFlagsHelp().c_str(), stdout);
        std::fputs(kUsageTail, stdout);
        return 0;
    }
    // A prediction runs no ranks: no MPI, no backend.
    if (std::find(args.begin(), args.end(), "--predict") != args.end())
        return worker::runPredict(args);
    // A --shared-device job is one process that needs no MPI; skipping MPI's start-up spares a
    // singleton's ~0.4 s. Under mpirun MPI is initialised all the same, so that the job size can
    // be checked (parseRunConfig refuses --shared-device in a job of several processes).
    const bool shared = std::find(args.begin(), args.end(), "--shared-device") != args.end();
    std::optional<comm::MpiRuntime> mpi;
    // A failing rank prints its one line, then MPI_Abort ends the job; without this OpenMPI adds
    // an 8-line notice to every failure (and, in a singleton, a garbled show_help error). Set
    // before MPI_Init, unless the user has chosen otherwise.
    ::setenv("OMPI_MCA_orte_execute_quiet", "1", 0);
    if (!shared || startedByMpirun()) mpi.emplace(&argc, &argv);
    const int rank = mpi ? mpi->worldRank() : 0;
    const int size = mpi ? mpi->worldSize() : 1;

    train::RunConfig config;
    std::optional<checkpoint::SaveFolderLock> saveLock;
    try {
        config = train::parseRunConfig(args, size);
        if (auto problem = config.sharedDevice ? worker::backendUnavailable(config)
                                               : agreedBackendProblem(config, rank, size)) {
            if (rank == 0) std::fprintf(stderr, "shardscope-worker: %s\n", problem->c_str());
            return 2;
        }
        if (auto problem = agreedSaveLock(config, rank, size, saveLock)) {
            if (rank == 0) std::fprintf(stderr, "shardscope-worker: %s\n", problem->c_str());
            return 2;
        }
        config.bf16Gemm = agreedBf16Gemm(config, size);
    } catch (const Error& e) {
        return refuse(rank, e);
    }
    // Run directly, the worker ends on a signal with a complete recording; under shardscope-cli
    // the CLI ends the job.
    if (!supervisedByTheCli(config)) worker::watchInterrupts();
    return config.sharedDevice ? worker::runSharedJob(config)
                               : worker::runMpiJob(config, rank, size);
}
