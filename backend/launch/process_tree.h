#pragma once
// The processes below a pid, read from /proc. OpenMPI puts each rank in its own process group,
// so killing mpirun's group does not reach the ranks; a teardown that must leave no orphans
// collects the tree first and signals every member.
#include <sys/types.h>
#include <vector>

namespace shardscope::launch {

// A process identified by pid and start time, so a pid the kernel reused for an unrelated
// process is never signalled.
struct ProcessId {
    pid_t pid = -1;
    unsigned long long startTime = 0;
};

std::vector<ProcessId> descendantPids(pid_t root); // empty where /proc is unavailable
void signalAll(const std::vector<ProcessId>& processes, int signal);
// The start time of `pid` (0 where it is gone).
unsigned long long startTimeOf(pid_t pid);
// True when `pid` is stopped (SIGSTOP / SIGTSTP: state T in /proc).
bool isStopped(pid_t pid);
// True when `pid` has ended: gone, or a zombie its (perhaps stopped) parent has not reaped.
bool hasEnded(pid_t pid);
// The MPI world rank of a process mpirun started (OMPI_COMM_WORLD_RANK / PMIX_RANK in its
// environment); -1 when it has none or cannot be read.
int mpiRankOf(pid_t pid);

} // namespace shardscope::launch
