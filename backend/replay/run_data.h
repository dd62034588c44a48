#pragma once
// What the replay knows about a run, as immutable values: the configuration from the handshake,
// each step's events with ledger snapshots and a failure, and applyEvent (how an event changes a
// rank's ledger). Produced by the StreamAssembler and handed to the GUI's pages (and the CLI,
// the benchmarks) as shared_ptr<const …>; plain C++, no Qt. The run's final report is the typed
// report::RunReport (report/report.h) itself: the replay has no view of its own.
#include "core/categories.h"
#include "core/event.h"
#include "report/run_info.h"

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace shardscope::replay {

using CategoryBytes = report::CategoryBytes;

// The handshake's configuration (report/run_info.h).
using report::RunInfo;
using report::UnitInfo;
// Throws shardscope::Error(Format) naming the problem when the JSON does not read.
RunInfo parseRunInfo(const std::string& configJson, int worldSize);

struct FailureInfo {
    int rank = -1;
    std::int64_t step = -1;
    std::string message;
};

// ---- ledger state, replayed event by event ----

inline constexpr std::size_t kTrackedUnits = 64; // units beyond this are not shown as gathered

// One rank's ledger after some prefix of the run's events.
struct RankState {
    ByteTable live;
    std::uint64_t liveTotal = 0;
    std::uint64_t peakTotal = 0; // maximum of liveTotal so far (since the run began)
    // Each tier's own maximum so far: with offload the device's peak is what meets --capacity.
    std::array<std::uint64_t, kTierCount> peakByTier{};
    std::int64_t step = -1;
    std::int32_t computeUnit = kNoUnit; // open compute span, if any
    Phase phase = Phase::None;
    // A recompute runs inside its unit's still-open backward; the backward is kept here and
    // shown again when the recompute ends.
    std::int32_t outerComputeUnit = kNoUnit;
    Phase outerPhase = Phase::None;
    std::int32_t collectiveUnit = kNoUnit; // open collective, if any
    CollectiveOp collective = CollectiveOp::None;
    std::uint64_t collectiveBytes = 0;
    // A prefetch's all-gather stays open while other collectives run inside it
    // (comm/communicator.h); the enclosing one is kept here and shown again when they end.
    std::int32_t outerUnit = kNoUnit;
    CollectiveOp outerCollective = CollectiveOp::None;
    std::uint64_t outerBytes = 0;
    std::array<std::uint16_t, kTrackedUnits> gathered{}; // live param_full buffers per unit

    bool isGathered(std::int32_t unit) const {
        return unit >= 0 && static_cast<std::size_t>(unit) < kTrackedUnits &&
               gathered[static_cast<std::size_t>(unit)] > 0;
    }
    bool operator==(const RankState&) const = default;
};
using LedgerState = std::vector<RankState>; // index = rank

// The one definition of how an event changes a rank's ledger; the assembler, the replay
// cursor and the tests' recomputation all call this. A free larger than what is live clamps
// at zero instead of wrapping (a malformed stream must not draw absurd bars). An End closes
// by the one span pairing (core/span_pairing.h): the current span's End shows the enclosing
// one again, the enclosing one's End drops it, an End matching neither changes nothing.
void applyEvent(RankState& state, const Event& e);

// One step of the run: every rank's events merged in time order, with snapshots of the ledger
// so a seek replays at most `snapshotEvery` events.
struct StepData {
    std::int64_t step = -1;
    bool complete = false;           // a StepSummary closed it (false: cut short by a failure)
    double loss = 0;                 // valid when complete
    std::uint64_t stepNs = 0;        // as measured by rank 0
    std::uint64_t firstEvent = 0;    // global index of events[0]
    std::uint64_t startNs = 0;       // timeNs of events[0]
    std::uint64_t durationNs = 0;    // last timeNs − first timeNs
    std::uint64_t replayStartNs = 0; // replay clock at events[0]: earlier steps back to back
    std::vector<Event> events;
    std::size_t snapshotEvery = 1;
    std::vector<LedgerState> snapshots; // snapshots[j]: state before events[j × snapshotEvery]
    LedgerState endState;               // state after the last event
    std::uint64_t peakEvent = 0;        // global index just after the step's highest rank total

    std::uint64_t endEvent() const { return firstEvent + events.size(); }
    std::uint64_t replayNs(std::size_t local) const {
        return replayStartNs + (events[local].timeNs - startNs);
    }
};
using StepPtr = std::shared_ptr<const StepData>;
using StepList = std::vector<StepPtr>;

} // namespace shardscope::replay
