#pragma once
// Collectives between the ranks of one job. A Communicator is one rank's handle; every call is
// collective (all ranks of the group call it in the same order).
//
// Note: buffers are flat and contiguous. For all-gather and reduce-scatter the full buffer is
// `count × size()` elements and rank r's shard sits at offset `r × count` — the layout of
// FSDP's flat parameter padded to a multiple of N (plan::paddedElements). Every call emits a
// CollectiveBegin/CollectiveEnd event pair to the device's ledger and adds to CommStats, so
// measured communication comes from what was actually called.
#include "core/error.h"
#include "core/event.h"

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace shardscope::device {
class Device;
}

namespace shardscope::comm {

enum class DType : std::uint8_t { F32, Bf16 };
std::size_t dtypeBytes(DType t);

// Per collective kind (indexed by CollectiveOp): what this rank called.
struct CommStats {
    std::array<std::uint64_t, kCollectiveOpCount> calls{};
    std::array<std::uint64_t, kCollectiveOpCount>
        payloadBytes{}; // nccl-tests "size" (plan/collective.h)
    std::array<std::uint64_t, kCollectiveOpCount>
        sentBytes{}; // plan::sentBytes: ring bytes from this rank
    std::array<std::uint64_t, kCollectiveOpCount> busyNs{}; // wall time inside the calls

    std::uint64_t totalSentBytes() const;
    void add(const CommStats& other);
};

// A collective whose deadline passed, where the communicator knows who did not arrive (rank
// threads do, and a point-to-point receive knows its sender): `missing` are WORLD ranks (of the
// job, Communicator::worldRankOf), `groupSize` the group's size, `what` the collective.
class CollectiveTimeout : public Error {
public:
    CollectiveTimeout(const std::string& message, std::string what, std::vector<int> missing,
                      int groupSize)
        : Error(ErrorKind::Comm, message), what_(std::move(what)), missing_(std::move(missing)),
          groupSize_(groupSize) {}
    const std::string& collective() const { return what_; }
    const std::vector<int>& missing() const { return missing_; }
    int groupSize() const { return groupSize_; }

private:
    std::string what_;
    std::vector<int> missing_;
    int groupSize_;
};

// This process's collectives as seen by its launcher (launch/progress.h): which one a rank
// entered (and in which step), when it left, and a heartbeat while it waits. Process-wide: a
// process under mpirun is one rank; rank threads (--shared-device) name a missing peer
// themselves and set none.
class CollectiveObserver {
public:
    virtual ~CollectiveObserver() = default;
    // `counted`: a new collective (false: waiting again in one already entered, e.g. the finish
    // of a started all-gather).
    virtual void entered(const char* what, std::int32_t unit, std::int64_t step, bool counted) = 0;
    virtual void left() = 0;
    virtual void alive() = 0;
};
void setCollectiveObserver(CollectiveObserver* observer); // null: none
CollectiveObserver* collectiveObserver();

class Communicator {
public:
    // Events go to the device's ledger; scratch buffers (deterministic reductions) are
    // allocated on it as comm_buffer. device may be null (no events, scratch on the heap).
    explicit Communicator(device::Device* device) : device_(device) {}
    virtual ~Communicator() = default;
    Communicator(const Communicator&) = delete;
    Communicator& operator=(const Communicator&) = delete;

    virtual int rank() const = 0;
    virtual int size() const = 0;
    // The job's (world) rank of group rank `groupRank`: messages and timeouts name world ranks.
    // The creator of a sub-group sets its members' world ranks (identity when unset).
    void setWorldRanks(std::vector<int> worldRanks) { worldRanks_ = std::move(worldRanks); }
    int worldRankOf(int groupRank) const {
        return groupRank >= 0 && static_cast<std::size_t>(groupRank) < worldRanks_.size()
                   ? worldRanks_[static_cast<std::size_t>(groupRank)]
                   : groupRank;
    }
    virtual std::string name() const = 0; // "self", "mpi", …

    // shard (count) → full (count × size), rank order.
    void allGather(const void* shard, void* full, std::size_t count, DType t, std::int32_t unit);
    // The same all-gather, started: it may still be moving data when this returns, so the
    // caller can compute meanwhile (prefetch); finishAllGather(ticket) waits for it. Its events
    // span start → finish. One started collective at a time per communicator (other collectives
    // may run while it is outstanding — their events nest inside its span); its buffers must not
    // be touched until it is finished. Communicators without asynchronous collectives complete
    // it before returning (then the span is the call itself).
    std::uint64_t startAllGather(const void* shard, void* full, std::size_t count, DType t,
                                 std::int32_t unit);
    void finishAllGather(std::uint64_t ticket);
    bool hasStarted() const { return started_.has_value(); }
    // full (count × size) summed over ranks → this rank's shard (count).
    void reduceScatter(const void* full, void* shard, std::size_t count, DType t,
                       std::int32_t unit);
    // data (count) summed over ranks, in place.
    void allReduce(void* data, std::size_t count, DType t, std::int32_t unit);
    // The same all-reduce over a tensor-parallel group (partial activations or input gradients),
    // counted and traced as CollectiveOp::TpAllReduce.
    void tpAllReduce(void* data, std::size_t count, DType t, std::int32_t unit);
    void broadcast(void* data, std::size_t bytes, int root);
    // Point-to-point messages (pipeline parallelism: activations and their gradients between
    // neighbouring stages; `peer` is a rank of this communicator). send posts `count` elements
    // and returns at once: the buffer must stay untouched until sendDone(ticket) is true or
    // waitSend(ticket) has returned. recv returns when the message from `peer` is in `data`; a
    // peer that does not send within the deadline is named (CollectiveTimeout). Messages between
    // two ranks arrive in the order they were sent, and a receive's count must equal the send's.
    // The span of a send is its posting (payload and sent bytes counted there), a receive's the
    // wait and the copy (payload counted, nothing sent).
    std::uint64_t send(const void* data, std::size_t count, DType t, int peer, std::int32_t unit);
    bool sendDone(std::uint64_t ticket);
    void waitSend(std::uint64_t ticket);
    void recv(void* data, std::size_t count, DType t, int peer, std::int32_t unit);
    // A step abandoned midway: sends not yet received are withdrawn (or waited for where a copy
    // of them is under way). Returns the tickets of those that could not be withdrawn (MPI may
    // not cancel a send its peer has begun to receive): their buffers must outlive the process.
    std::vector<std::uint64_t> cancelSends() { return doCancelSends(); }
    // After a recv that threw: true when its message could not be withdrawn (MPI may still write
    // it into the buffer, which must then outlive the process). Clears the flag.
    bool receiveAbandoned() { return std::exchange(receiveAbandoned_, false); }
    // Small scalar reductions (loss, squared gradient norm); not counted as payload.
    double sumScalar(double value);
    double maxScalar(double value);
    virtual void barrier() = 0;
    // Instrumentation, not training traffic (no events, not in CommStats): every rank's bytes
    // arrive at `root` in rank order; other ranks get an empty vector. Used to batch each
    // step's events to rank 0, which writes the stream and the recording.
    virtual std::vector<std::string> gatherBytes(const std::string& local, int root) = 0;

    // Sums in rank order 0..N−1 so every strategy reduces bit-identically (--deterministic).
    void setDeterministic(bool on) { deterministic_ = on; }
    bool deterministic() const { return deterministic_; }
    // A collective that has not completed within the deadline throws Error(Comm).
    void setTimeout(std::chrono::milliseconds t) { timeout_ = t; }
    std::chrono::milliseconds timeout() const { return timeout_; }

    const CommStats& stats() const { return stats_; }
    void resetStats() { stats_ = {}; }

protected:
    virtual void doAllGather(const void* shard, void* full, std::size_t count, DType t) = 0;
    virtual void doReduceScatter(const void* full, void* shard, std::size_t count, DType t) = 0;
    virtual void doAllReduce(void* data, std::size_t count, DType t) = 0;
    virtual void doBroadcast(void* data, std::size_t bytes, int root) = 0;
    virtual double doScalar(double value, bool max) = 0;
    // Asynchronous all-gather: returns false when it completed inside the call, true when it is
    // in flight (doFinishAllGather then completes it). The default completes it at once.
    virtual bool doStartAllGather(const void* shard, void* full, std::size_t count, DType t) {
        doAllGather(shard, full, count, t);
        return false;
    }
    virtual void doFinishAllGather() {}
    // Point-to-point: doSend returns a handle of the posted send; doSendDone tests it (wait:
    // until it completes, within the deadline, naming the peer). The defaults refuse (a
    // communicator without messages between ranks).
    virtual std::uint64_t doSend(const void* data, std::size_t bytes, int peer);
    virtual bool doSendDone(std::uint64_t handle, bool wait);
    virtual void doRecv(void* data, std::size_t bytes, int peer);
    virtual std::vector<std::uint64_t> doCancelSends() { return {}; }

private:
    // Runs one collective between its Begin/End events and counts it; a rank that only
    // receives (a broadcast's non-root) sends nothing, others plan::sentBytes.
    template <class F>
    void traced(CollectiveOp op, std::int32_t unit, std::uint64_t payload, F&& body,
                bool sender = true);
    // Adds one completed call that began at monotonic time t0 to the statistics.
    void addStats(CollectiveOp op, std::uint64_t payload, std::uint64_t sent, std::uint64_t t0);

protected:
    // Tells the process's CollectiveObserver, if any (with the device ledger's step).
    void noteEntered(const char* what, std::int32_t unit, bool counted = true) const;
    static void noteLeft();
    static void noteAlive();

    device::Device* device_;
    bool receiveAbandoned_ = false; // doRecv: a failed receive still in flight

private:
    struct Started {
        std::uint64_t ticket = 0;
        Event begin{};
        std::uint64_t t0 = 0, payload = 0, sent = 0;
        bool inFlight = false;
    };
    std::optional<Started> started_;
    std::uint64_t nextTicket_ = 1;
    CommStats stats_{};
    std::vector<int> worldRanks_; // by group rank; empty: the world itself
    bool deterministic_ = false;
    std::chrono::milliseconds timeout_{30000};
};

// One rank, no peers: collectives are copies. Used by single-rank runs and builds without MPI.
std::unique_ptr<Communicator> makeSelfCommunicator(device::Device* device);

// Sums `parts` (each `count` elements, rank order) into `out`, accumulating in fp32 and
// rounding once: the deterministic reduction every communicator shares.
void sumInRankOrder(const void* const* parts, int nparts, void* out, std::size_t count, DType t);

} // namespace shardscope::comm
