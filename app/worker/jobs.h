#pragma once
// The two ways the worker hosts ranks. Both return the process's exit code (0, or 1 after a
// rank failed, with the one line printed and a Failure record written where rank 0 can).
#include "train/run_config.h"

#include <string>
#include <vector>

namespace shardscope::worker {

// One process per rank under mpirun (or alone): this process is world rank `rank` of `size`.
// A failing rank prints its line and ends the whole job (MPI_Abort; never returns then), except
// in a job of one process, which returns 1.
int runMpiJob(const train::RunConfig& config, int rank, int size);

// --shared-device: config.worldSize rank threads in this process, no MPI.
int runSharedJob(const train::RunConfig& config);

// --predict REQUEST (report/prediction.h, one process, no MPI, no training): the dry run's
// predicted peak of each scenario of the request, printed to stdout as one answer. A request
// that does not read, or a scenario that does not validate: one line on stderr and exit 2.
int runPredict(const std::vector<std::string>& args);

} // namespace shardscope::worker
