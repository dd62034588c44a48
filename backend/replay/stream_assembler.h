#pragma once
// Turns decoded protocol records into immutable run data: the RunInfo from the
// handshakes, one StepData per step (all ranks' batches merged in time order, with ledger
// snapshots), the report and failures. Pure C++, no Qt: runs on the decoder thread, and in
// tests and benchmarks directly.
#include "protocol/protocol.h"
#include "replay/run_data.h"
#include "report/report.h"

#include <memory>
#include <optional>
#include <vector>

namespace shardscope::replay {

class StreamAssembler {
public:
    // What consume() produced since the last take().
    struct Output {
        std::shared_ptr<const RunInfo> runInfo;
        StepList steps;
        std::shared_ptr<const report::RunReport> report;
        std::string reportProblem; // the report record did not read (report stays null)
        std::vector<FailureInfo> failures;
        bool ended = false;
        bool empty() const {
            return !runInfo && steps.empty() && !report && reportProblem.empty() &&
                   failures.empty() && !ended;
        }
    };

    // Throws Error(Format) for a stream that is well-formed on the wire but inconsistent
    // (events before any handshake, a rank outside the world, unparsable JSON, a configuration
    // whose world size differs from its handshake's, steps out of order, or a stream that asks
    // for more ledger memory than its size justifies).
    //
    // Note: every table is sized from the handshake's world size (≤ protocol::kMaxWorldSize)
    // only after the configuration agrees with it, and the ledger snapshots the steps keep stay
    // within kLedgerAllowanceBytes + kLedgerBytesPerInputByte × the stream's size.
    void consume(protocol::Record record);
    // Closes a step cut short (failure, or a stream that stopped) so its events still show.
    void flushPartialStep();
    Output take();

    bool hasRunInfo() const { return info_ != nullptr; }
    std::int64_t lastStep() const { return lastStep_; }
    std::uint64_t eventsSeen() const { return nextEvent_; }
    // The stream said how the run ended (an End or a Failure record); a recording with neither
    // was cut short.
    bool ended() const { return ended_; }

    // Ledger snapshots are taken every this many events of a step (more ranks: sparser, so a
    // snapshot's size × count stays bounded; a seek replays at most this many events).
    static std::size_t snapshotInterval(int worldSize);

    static constexpr std::uint64_t kLedgerAllowanceBytes = 256ull << 20;
    static constexpr std::uint64_t kLedgerBytesPerInputByte = 64;
    // Steps are numbered from 0 upwards; a larger number is not a real run.
    static constexpr std::int64_t kMaxStep = std::int64_t{1} << 40;

private:
    void onHandshake(const protocol::Handshake& h);
    void onBatch(protocol::EventBatch&& b);
    void closeStep(std::int64_t step, bool complete, double loss, std::uint64_t stepNs);
    void chargeLedger(std::size_t states);

    std::shared_ptr<const RunInfo> info_;
    int worldSize_ = 0;
    std::vector<std::vector<Event>> pending_; // per rank, the current step's events
    LedgerState running_;
    std::uint64_t nextEvent_ = 0;
    std::uint64_t replayNs_ = 0;
    std::int64_t lastStep_ = -1;
    std::uint64_t inputBytes_ = 0;  // the encoded size of the records consumed so far
    std::uint64_t ledgerBytes_ = 0; // ledger states kept in the steps handed out
    bool ended_ = false;
    Output out_;
};

} // namespace shardscope::replay
