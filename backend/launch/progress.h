#pragma once
// The ranks' progress side channel: each rank process of a local job keeps one small record in
// the job's private folder — how many collectives it has entered, the one it is in (kind, unit,
// step) and a heartbeat while it waits — so that when the stream stops the supervisor can name
// the rank that did not arrive, not the healthy rank that noticed.
//
// Note: a record is a fixed-layout struct written through a shared mapping of
// `<folder>/progress.<rank>`; the writer bumps `seq` to odd before an update and to even after
// it, and a reader retries a record caught mid-update. Writer and reader are the same build
// (the launcher sets the folder in the environment of the job it starts), so the layout is not
// versioned. Only ranks on the launcher's machine can write here: with a hostfile the remote
// ranks have no record and the stall is reported without a rank.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace shardscope::launch {

// The environment variable that carries the folder to the ranks.
inline constexpr const char* kProgressEnv = "SHARDSCOPE_PROGRESS_DIR";

struct RankProgress {
    int rank = -1;
    std::uint64_t entered = 0;     // collectives entered so far
    bool inside = false;           // waiting in the last one entered
    std::string what;              // the last collective entered ("all-gather", …)
    std::int32_t unit = -1;        // its unit (-1: none)
    std::int64_t step = -1;        // the rank's 0-based step then (-1: setup)
    std::uint64_t heartbeatNs = 0; // monotonic time of the last sign of life
    int signal = 0; // SIGTERM, SIGINT or SIGHUP that ended the rank's process; 0: none came
};

// One rank's writer. Inactive (every call a no-op) when the folder is empty or unusable: the
// side channel is diagnostics, never a reason for a rank to fail. While one is active, a
// SIGTERM, SIGINT or SIGHUP to its process is noted in its record before the signal acts as it
// would have (the previous disposition, re-raised): the supervisor can tell a job ended from
// outside (a scheduler's SIGTERM to mpirun) from one that failed.
class ProgressWriter {
public:
    ProgressWriter() = default;
    ProgressWriter(const std::string& folder, int rank);
    ~ProgressWriter();
    ProgressWriter(const ProgressWriter&) = delete;
    ProgressWriter& operator=(const ProgressWriter&) = delete;

    bool active() const { return record_ != nullptr; }
    // `counted`: a new collective; false: waiting again in one entered before.
    void entered(const char* what, std::int32_t unit, std::int64_t step, bool counted = true);
    void left();
    void alive(); // a heartbeat while waiting

    struct Record; // the shared layout (progress.cpp)

private:
    Record* record_ = nullptr;
};

// Every record in `folder`, by rank; empty where there are none.
std::vector<RankProgress> readProgress(const std::string& folder);

// The rank whose progress stopped while its peers waited for it.
struct StuckRank {
    int rank = -1;
    std::int64_t step = -1; // its 0-based step (-1: setup)
    std::string what;       // the collective the others wait in
    std::int32_t unit = -1;
    bool arrived = false;       // it is inside that collective too, but silent
    std::vector<int> alsoStuck; // further ranks behind in the same way
};
// Rules: when some ranks' heartbeats are fresh (they wait) and others' are older than the
// latest one by `silentNs`, the silent ones are stuck (the one that entered fewest collectives
// first), and `what`/`unit` are the last collective the furthest live rank entered — it waits
// there, or just gave up on it (or, for a stuck rank that had entered it too, that one: `arrived`).
// When heartbeats tell nothing apart (all fresh, or all silent because the job was already torn
// down), the ranks that entered fewer collectives than the furthest rank did not arrive. None when
// the records do not single a rank out.
std::optional<StuckRank> findStuckRank(const std::vector<RankProgress>& ranks,
                                       std::uint64_t silentNs = 1'000'000'000);

} // namespace shardscope::launch
