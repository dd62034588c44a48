#pragma once
// OpenMPI-backed communicators. The header names no MPI type, so the strategy and train
// libraries stay MPI-free; only comm's .cpp links MPI.
#include "comm/communicator.h"

#include <memory>

namespace shardscope::comm {

// Compiled with MPI support (SHARDSCOPE_MPI=ON)?
bool mpiCompiledIn();

// MPI_Init_thread(FUNNELED) on construction, MPI_Finalize on destruction. One per process.
class MpiRuntime {
public:
    MpiRuntime(int* argc, char*** argv);
    ~MpiRuntime();
    MpiRuntime(const MpiRuntime&) = delete;
    MpiRuntime& operator=(const MpiRuntime&) = delete;
    int worldRank() const { return rank_; }
    int worldSize() const { return size_; }
    // Ends the whole job (MPI_Abort): used after an error so peers stop waiting.
    [[noreturn]] static void abort(int exitCode);

private:
    int rank_ = 0;
    int size_ = 1;
};

// MPI_COMM_WORLD.
std::unique_ptr<Communicator> makeMpiWorldCommunicator(device::Device* device);
// A sub-communicator of the world (MPI_Comm_split): ranks with the same color form a group,
// ordered by key. HYBRID_SHARD uses one for the shard group and one across replicas.
std::unique_ptr<Communicator> makeMpiSplitCommunicator(device::Device* device, int color, int key);

} // namespace shardscope::comm
