#pragma once
// One rank of a training job, however it is hosted: a process under mpirun (mpi_job.cpp) or a
// thread of a --shared-device worker (shared_job.cpp). The host builds the rank's Ledger,
// Device and communicators; runRank does everything else the same way in both.
#include "comm/communicator.h"
#include "device/device.h"
#include "protocol/stream_writer.h"
#include "strategy/sharding.h"
#include "train/run_config.h"

#include <cstdint>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace shardscope::worker {

// A rank's communicators and the groups the strategy sees. Destroying it makes the rank leave
// its groups: in a shared-device job, peers that wait for it in a collective fail at once.
struct RankComms {
    std::vector<std::unique_ptr<comm::Communicator>> owned;
    strategy::CommGroups groups;
};

// Deterministic reductions and the collective deadline of the configuration, on every group.
void configureComms(RankComms& comms, const train::RunConfig& config);

// Trains on this rank: handshakes, the states' allocations, the steps — each step's events go
// to rank 0 over groups.world's gatherBytes, rank 0 writes them to `writer` (null on other
// ranks; may have no target) — then the final weights and every rank's RankResult to rank 0,
// which writes the report (--json, --weights-out, the stream's Report and End).
// Sets the device ledger's capacity from the configuration. Throws whatever fails; the
// ledger's step says where (-1: setup). The ledger's event sink is cleared before returning.
void runRank(const train::RunConfig& config, device::Device& device,
             const strategy::CommGroups& groups, StreamWriter* writer);

// A worker run directly (no shardscope-cli, which freezes and ends a job itself) ends on
// SIGINT, SIGTERM or SIGHUP at the next step boundary, every rank at the same one, with a
// complete recording of the steps it ran (a Failure record saying so, then End); a second such
// signal ends it at once. An ignored signal (nohup) stays ignored.
void watchInterrupts();
// Thrown by every rank at the step boundary after such a signal (what(): "interrupted by
// SIGTERM after step K").
class Interrupted : public std::runtime_error {
public:
    Interrupted(int signal, std::int64_t stepsDone);
    int signal() const { return signal_; }

private:
    int signal_;
};

// What a rank's exception says, for people: e.what(), except that std::bad_alloc (whose what()
// is only "std::bad_alloc") becomes a sentence saying which memory ran out.
std::string describeFailure(const std::exception& e);

// "shardscope-worker: rank R, step S: message" (S counted from 1; "setup" before the first
// step, "after step K" once the K steps are done), flushed: the one line a failing job prints.
void printRankFailure(int rank, std::int64_t ledgerStep, const train::RunConfig& config,
                      const std::string& message);

} // namespace shardscope::worker
