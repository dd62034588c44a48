// One rank per process under mpirun. Errors inside a rank: its one line, a Failure record when
// it is rank 0 (which holds the stream), and MPI_Abort so that the whole job ends at once (a job
// of one process just returns 1). A damaged checkpoint to resume is bad input: exit 2.
#include "backends.h"
#include "comm/mpi_communicator.h"
#include "jobs.h"
#include "launch/progress.h"
#include "rank.h"
#include "train/checkpointing.h"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <optional>
#include <string>

namespace shardscope::worker {
namespace {

// This rank's collectives in the launcher's progress folder (set in the environment by the
// launcher on this machine), so that a stuck rank is named by the launcher.
class ProgressObserver final : public comm::CollectiveObserver {
public:
    explicit ProgressObserver(int rank) {
        if (const char* dir = std::getenv(launch::kProgressEnv)) writer_.emplace(dir, rank);
        if (writer_ && writer_->active()) comm::setCollectiveObserver(this);
    }
    ~ProgressObserver() override {
        if (comm::collectiveObserver() == this) comm::setCollectiveObserver(nullptr);
    }
    ProgressObserver(const ProgressObserver&) = delete;
    ProgressObserver& operator=(const ProgressObserver&) = delete;
    void entered(const char* what, std::int32_t unit, std::int64_t step, bool counted) override {
        writer_->entered(what, unit, step, counted);
    }
    void left() override { writer_->left(); }
    void alive() override { writer_->alive(); }

private:
    std::optional<launch::ProgressWriter> writer_;
};

} // namespace

int runMpiJob(const train::RunConfig& config, int rank, int size) {
    // Declaration order is teardown order in reverse: communicators, then the device, then the
    // ledger they report to.
    const ProgressObserver progress(rank);
    Ledger ledger(rank);
    StreamWriter writer;
    MpiRankSetup setup;
    try {
        if (rank == 0) {
            if (config.streamPath) writer.connectSocket(*config.streamPath);
            if (config.tracePath) writer.openRecording(*config.tracePath);
        }
        setup = makeMpiRank(config, ledger, rank, size);
        runRank(config, *setup.device, setup.comms.groups, rank == 0 ? &writer : nullptr);
        return 0;
    } catch (const Interrupted& e) {
        // Every rank stopped at the same step boundary: rank 0 closes the recording, all exit.
        if (rank == 0) {
            std::fprintf(stderr, "shardscope-worker: %s\n", e.what());
            if (writer.active()) {
                try {
                    writer.write(protocol::Failure{-1, ledger.step(), e.what()});
                    writer.write(protocol::End{});
                    writer.finish();
                } catch (...) {
                    writer.discard();
                }
            }
        }
        return 128 + e.signal();
    } catch (const std::exception& e) {
        const std::int64_t step = ledger.step();
        const std::string message = describeFailure(e);
        // A checkpoint failure is reported by rank 0 for the rank it happened on; a damaged
        // checkpoint to resume is bad input (one line, exit 2), like a bad flag.
        const auto* ckpt = dynamic_cast<const train::CheckpointError*>(&e);
        const int code = ckpt && ckpt->badInput() ? 2 : 1;
        const int who = ckpt ? ckpt->rank() : rank;
        if (code == 2)
            std::fprintf(stderr, "shardscope-worker: %s\n", message.c_str());
        else
            printRankFailure(who, step, config, message);
        if (rank == 0 && writer.active()) {
            try {
                writer.write(protocol::Failure{who, step, message});
                writer.write(protocol::End{});
                writer.finish();
            } catch (...) {
                // The line above already said what went wrong; no half-written recording stays.
                writer.discard();
            }
        }
        // Alone there are no peers to stop: a normal exit (MPI_Finalize) instead of MPI_Abort.
        if (size == 1) return code;
        comm::MpiRuntime::abort(code);
    }
}

} // namespace shardscope::worker
