#include "comm/communicator.h"

#include "core/error.h"
#include "core/ledger.h"
#include "core/numeric.h"
#include "device/device.h"
#include "plan/collective.h"

#include <atomic>
#include <cstring>
#include <vector>

namespace shardscope::comm {

std::size_t dtypeBytes(DType t) {
    return t == DType::F32 ? 4 : 2;
}

std::uint64_t CommStats::totalSentBytes() const {
    std::uint64_t sum = 0;
    for (auto b : sentBytes)
        sum += b;
    return sum;
}

void CommStats::add(const CommStats& o) {
    for (std::size_t i = 0; i < calls.size(); ++i) {
        calls[i] += o.calls[i];
        payloadBytes[i] += o.payloadBytes[i];
        sentBytes[i] += o.sentBytes[i];
        busyNs[i] += o.busyNs[i];
    }
}

void Communicator::addStats(CollectiveOp op, std::uint64_t payload, std::uint64_t sent,
                            std::uint64_t t0) {
    const auto i = static_cast<std::size_t>(op);
    stats_.calls[i] += 1;
    stats_.payloadBytes[i] += payload;
    stats_.sentBytes[i] += sent;
    stats_.busyNs[i] += monotonicNs() - t0;
}

namespace {
std::atomic<CollectiveObserver*> gObserver{nullptr};

// Leaves the observed collective however the body ends (a timeout throws).
struct LeaveGuard {
    ~LeaveGuard() {
        if (CollectiveObserver* o = gObserver.load(std::memory_order_relaxed)) o->left();
    }
};
} // namespace

void setCollectiveObserver(CollectiveObserver* observer) {
    gObserver.store(observer);
}
CollectiveObserver* collectiveObserver() {
    return gObserver.load(std::memory_order_relaxed);
}

void Communicator::noteEntered(const char* what, std::int32_t unit, bool counted) const {
    if (CollectiveObserver* o = gObserver.load(std::memory_order_relaxed))
        o->entered(what, unit, device_ ? device_->ledger().step() : -1, counted);
}
void Communicator::noteLeft() {
    if (CollectiveObserver* o = gObserver.load(std::memory_order_relaxed)) o->left();
}
void Communicator::noteAlive() {
    if (CollectiveObserver* o = gObserver.load(std::memory_order_relaxed)) o->alive();
}

template <class F>
void Communicator::traced(CollectiveOp op, std::int32_t unit, std::uint64_t payload, F&& body,
                          bool sender) {
    Event e;
    e.kind = EventKind::CollectiveBegin;
    e.collective = op;
    e.unit = unit;
    e.bytes = payload;
    e.peers = size();
    if (device_) device_->ledger().emit(e);
    const std::uint64_t t0 = monotonicNs();
    {
        noteEntered(plan::traits(op).displayName.data(), unit);
        const LeaveGuard leave;
        body();
    }
    addStats(op, payload,
             sender ? plan::sentBytes(op, payload, static_cast<std::uint64_t>(size())) : 0, t0);
    e.kind = EventKind::CollectiveEnd;
    if (device_) device_->ledger().emit(e);
}

void Communicator::allGather(const void* shard, void* full, std::size_t count, DType t,
                             std::int32_t unit) {
    const std::uint64_t n = static_cast<std::uint64_t>(size());
    const std::uint64_t shardBytes = count * dtypeBytes(t);
    traced(CollectiveOp::AllGather, unit, shardBytes * n,
           [&] { doAllGather(shard, full, count, t); });
}

std::uint64_t Communicator::startAllGather(const void* shard, void* full, std::size_t count,
                                           DType t, std::int32_t unit) {
    if (started_)
        throw Error(ErrorKind::Internal, "an all-gather was started while another is outstanding");
    const std::uint64_t n = static_cast<std::uint64_t>(size());
    const std::uint64_t shardBytes = count * dtypeBytes(t);
    Started s;
    s.ticket = nextTicket_++;
    s.begin.kind = EventKind::CollectiveBegin;
    s.begin.collective = CollectiveOp::AllGather;
    s.begin.unit = unit;
    s.begin.bytes = shardBytes * n;
    s.begin.peers = size();
    s.payload = shardBytes * n;
    s.sent = plan::sentBytes(CollectiveOp::AllGather, s.payload, n);
    if (device_) device_->ledger().emit(s.begin);
    s.t0 = monotonicNs();
    started_ = s;
    try {
        noteEntered(plan::traits(CollectiveOp::AllGather).displayName.data(), unit);
        const LeaveGuard leave;
        started_->inFlight = doStartAllGather(shard, full, count, t);
    } catch (...) {
        started_.reset();
        throw;
    }
    return s.ticket;
}

void Communicator::finishAllGather(std::uint64_t ticket) {
    if (!started_ || started_->ticket != ticket)
        throw Error(ErrorKind::Internal, "finishAllGather: no such all-gather outstanding");
    Started s = *started_;
    started_.reset(); // a failed wait leaves nothing outstanding: the error ends the run
    if (s.inFlight) {
        noteEntered(plan::traits(CollectiveOp::AllGather).displayName.data(), s.begin.unit, false);
        const LeaveGuard leave;
        doFinishAllGather();
    }
    addStats(CollectiveOp::AllGather, s.payload, s.sent, s.t0);
    s.begin.kind = EventKind::CollectiveEnd;
    if (device_) device_->ledger().emit(s.begin);
}

void Communicator::reduceScatter(const void* full, void* shard, std::size_t count, DType t,
                                 std::int32_t unit) {
    const std::uint64_t n = static_cast<std::uint64_t>(size());
    const std::uint64_t shardBytes = count * dtypeBytes(t);
    traced(CollectiveOp::ReduceScatter, unit, shardBytes * n,
           [&] { doReduceScatter(full, shard, count, t); });
}

void Communicator::allReduce(void* data, std::size_t count, DType t, std::int32_t unit) {
    traced(CollectiveOp::AllReduce, unit, count * dtypeBytes(t),
           [&] { doAllReduce(data, count, t); });
}

void Communicator::tpAllReduce(void* data, std::size_t count, DType t, std::int32_t unit) {
    traced(CollectiveOp::TpAllReduce, unit, count * dtypeBytes(t),
           [&] { doAllReduce(data, count, t); });
}

void Communicator::broadcast(void* data, std::size_t bytes, int root) {
    if (root < 0 || root >= size())
        throw Error(ErrorKind::Internal,
                    "broadcast root " + std::to_string(root) + " out of range");
    traced(
        CollectiveOp::Broadcast, kNoUnit, bytes, [&] { doBroadcast(data, bytes, root); },
        rank() == root);
}

// ---- point-to-point ---------------------------------------------------------------------------

namespace {
void checkPeer(const Communicator& c, int peer) {
    if (peer < 0 || peer >= c.size() || peer == c.rank())
        throw Error(ErrorKind::Internal, "point-to-point peer " + std::to_string(peer) +
                                             " is not another rank of a group of " +
                                             std::to_string(c.size()));
}
} // namespace

std::uint64_t Communicator::send(const void* data, std::size_t count, DType t, int peer,
                                 std::int32_t unit) {
    checkPeer(*this, peer);
    const std::uint64_t bytes = count * dtypeBytes(t);
    std::uint64_t handle = 0;
    traced(CollectiveOp::PipeSend, unit, bytes, [&] { handle = doSend(data, bytes, peer); });
    return handle;
}

bool Communicator::sendDone(std::uint64_t ticket) {
    return doSendDone(ticket, false);
}

void Communicator::waitSend(std::uint64_t ticket) {
    noteEntered(plan::traits(CollectiveOp::PipeSend).displayName.data(), kNoUnit, false);
    const LeaveGuard leave;
    doSendDone(ticket, true);
}

void Communicator::recv(void* data, std::size_t count, DType t, int peer, std::int32_t unit) {
    checkPeer(*this, peer);
    const std::uint64_t bytes = count * dtypeBytes(t);
    traced(
        CollectiveOp::PipeRecv, unit, bytes, [&] { doRecv(data, bytes, peer); }, false);
}

std::uint64_t Communicator::doSend(const void*, std::size_t, int) {
    throw Error(ErrorKind::InvalidArgument,
                "the " + name() + " communicator has no point-to-point messages");
}
bool Communicator::doSendDone(std::uint64_t, bool) {
    throw Error(ErrorKind::InvalidArgument,
                "the " + name() + " communicator has no point-to-point messages");
}
void Communicator::doRecv(void*, std::size_t, int) {
    throw Error(ErrorKind::InvalidArgument,
                "the " + name() + " communicator has no point-to-point messages");
}

double Communicator::sumScalar(double value) {
    noteEntered("scalar sum", kNoUnit);
    const LeaveGuard leave;
    return doScalar(value, false);
}
double Communicator::maxScalar(double value) {
    noteEntered("scalar max", kNoUnit);
    const LeaveGuard leave;
    return doScalar(value, true);
}

void sumInRankOrder(const void* const* parts, int nparts, void* out, std::size_t count, DType t) {
    if (t == DType::F32) {
        auto* dst = static_cast<float*>(out);
        for (std::size_t i = 0; i < count; ++i) {
            float acc = 0.0f;
            for (int r = 0; r < nparts; ++r)
                acc += static_cast<const float*>(parts[r])[i];
            dst[i] = acc;
        }
        return;
    }
    auto* dst = static_cast<Bf16*>(out);
    for (std::size_t i = 0; i < count; ++i) {
        float acc = 0.0f;
        for (int r = 0; r < nparts; ++r)
            acc += toFloat(static_cast<const Bf16*>(parts[r])[i]);
        dst[i] = toBf16(acc);
    }
}

namespace {

class SelfCommunicator final : public Communicator {
public:
    using Communicator::Communicator;
    int rank() const override { return 0; }
    int size() const override { return 1; }
    std::string name() const override { return "self"; }
    void barrier() override {}
    std::vector<std::string> gatherBytes(const std::string& local, int) override { return {local}; }

protected:
    void doAllGather(const void* shard, void* full, std::size_t count, DType t) override {
        if (shard != full) std::memmove(full, shard, count * dtypeBytes(t));
    }
    void doReduceScatter(const void* full, void* shard, std::size_t count, DType t) override {
        if (shard != full) std::memmove(shard, full, count * dtypeBytes(t));
    }
    void doAllReduce(void*, std::size_t, DType) override {}
    void doBroadcast(void*, std::size_t, int) override {}
    double doScalar(double value, bool) override { return value; }
};

} // namespace

std::unique_ptr<Communicator> makeSelfCommunicator(device::Device* device) {
    return std::make_unique<SelfCommunicator>(device);
}

} // namespace shardscope::comm
