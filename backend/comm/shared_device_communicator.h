#pragma once
// N ranks in ONE process, one thread per rank: the communicator of `--shared-device` (NCCL
// refuses two ranks on one GPU, so several ranks on one GPU cannot be NCCL ranks).
//
// The rendezvous is a template over how bytes move, so the same host-side protocol runs on CPU
// memory (HostCopyReduce, tested on any machine) and on one GPU (the CUDA backend in
// shared_device_communicator.cpp: cudaMemcpyAsync and rank-order sum kernels on each rank's own
// stream, ordered across ranks with events). A collective on rank r:
//   1. publishes its call (op, buffers, count) in its slot and marks its inputs ready;
//   2. meets the other ranks at a barrier, checks that every rank called the same collective
//      (a mismatch is an error on every rank, not a hang or silent corruption);
//   3. does ITS share of the work, reading peers' buffers directly: all-gather copies every
//      shard into its own full buffer; reduce-scatter sums its chunk from every rank's full
//      buffer; all-reduce is reduce-scatter into a scratch chunk, a barrier, all-gather of the
//      chunks; broadcast copies from the root;
//   4. marks its reads done and meets the others again before anyone may reuse a buffer.
// Sums are in rank order with fp32 accumulation (comm::sumInRankOrder), always — so the
// results are deterministic and bitwise equal to the MPI communicator's --deterministic mode.
//
// A started all-gather (Communicator::startAllGather, the strategy's prefetch) runs steps 1–3 at
// the start, with its copies issued "aside" (CUDA: on the rank's second stream, so they overlap
// the compute queued meanwhile; CPU: done on the spot), and step 4 when it is finished; the
// collectives called in between run their own steps 1–4 inside it, in the same order on every
// rank, so the barrier generations still line up.
//
// Every wait has the communicator's deadline. A rank that does not arrive is named ("waiting for
// rank 2"); a rank whose communicator is destroyed (its thread finished or unwound from an
// exception) breaks the group, so its peers fail at once instead of waiting for the deadline.
// std::barrier is not used because it can neither time out nor be broken.
#include "comm/communicator.h"
#include "core/error.h"
#include "device/device.h"
#include "plan/collective.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace shardscope::device {
class CudaDevice;
}

namespace shardscope::comm {

// A reusable barrier for a fixed set of rank threads, with a deadline, naming who is missing.
class RankBarrier {
public:
    explicit RankBarrier(int ranks)
        : n_(ranks), arrivedAt_(static_cast<std::size_t>(ranks), kNever),
          left_(static_cast<std::size_t>(ranks), false) {}

    // Throws Error(Comm) when the deadline passes (and breaks the barrier for everyone), or when
    // the barrier is or becomes broken.
    void arriveAndWait(int rank, std::chrono::milliseconds timeout, const char* what) {
        std::unique_lock lock(mutex_);
        throwIfBroken();
        const std::uint64_t gen = generation_;
        arrivedAt_[static_cast<std::size_t>(rank)] = gen;
        if (++arrived_ == n_) {
            arrived_ = 0;
            ++generation_;
            cv_.notify_all();
            return;
        }
        for (std::size_t q = 0; q < left_.size(); ++q)
            if (left_[q])
                breakLocked("rank " + std::to_string(rank) + ": " + what +
                            " can never complete: rank " + std::to_string(q) +
                            " has left the group");
        const auto deadline = std::chrono::steady_clock::now() + timeout;
        while (generation_ == gen && !broken_) {
            if (cv_.wait_until(lock, deadline) == std::cv_status::timeout && generation_ == gen &&
                !broken_) {
                std::string missing;
                std::vector<int> ranks;
                for (std::size_t q = 0; q < arrivedAt_.size(); ++q)
                    if (arrivedAt_[q] != gen) {
                        missing += (missing.empty() ? "" : ", ") + std::to_string(q);
                        ranks.push_back(static_cast<int>(q));
                    }
                const std::string reason = "rank " + std::to_string(rank) + ": " + what +
                                           " timed out after " + std::to_string(timeout.count()) +
                                           " ms waiting for rank(s) " + missing;
                if (!broken_) {
                    broken_ = true;
                    reason_ = reason;
                    cv_.notify_all();
                    throw CollectiveTimeout(reason, what, std::move(ranks), n_);
                }
                throw Error(ErrorKind::Comm, reason_);
            }
        }
        if (generation_ == gen) throwIfBroken();
    }

    // A rank is gone (its communicator was destroyed). Peers waiting now, or arriving later,
    // fail at once: the collective can never complete.
    void leave(int rank) {
        std::lock_guard lock(mutex_);
        left_[static_cast<std::size_t>(rank)] = true;
        if (arrived_ > 0 && !broken_) {
            broken_ = true;
            reason_ = "rank " + std::to_string(rank) +
                      " left the group while its peers waited in a collective";
            cv_.notify_all();
        }
    }

    void breakWith(const std::string& reason) {
        std::lock_guard lock(mutex_);
        if (!broken_) {
            broken_ = true;
            reason_ = reason;
            cv_.notify_all();
        }
    }

private:
    static constexpr std::uint64_t kNever = ~std::uint64_t{0};
    void throwIfBroken() const {
        if (broken_) throw Error(ErrorKind::Comm, reason_);
    }
    [[noreturn]] void breakLocked(const std::string& reason) {
        if (!broken_) {
            broken_ = true;
            reason_ = reason;
            cv_.notify_all();
        }
        throw Error(ErrorKind::Comm, reason_);
    }

    std::mutex mutex_;
    std::condition_variable cv_;
    int n_;
    int arrived_ = 0;
    std::uint64_t generation_ = 0;
    std::vector<std::uint64_t> arrivedAt_; // generation each rank last arrived in
    std::vector<bool> left_;
    bool broken_ = false;
    std::string reason_;
};

// What a rank published for the current collective.
struct SharedCall {
    enum class Op : std::uint8_t {
        AllGather,
        ReduceScatter,
        AllReduce,
        Broadcast,
        Scalar,
        Gather,
        Barrier
    };
    Op op = Op::Barrier;
    const void* in = nullptr;
    void* out = nullptr;
    void* scratch = nullptr;
    std::size_t count = 0; // elements (bytes for broadcast)
    DType type = DType::F32;
    int root = 0;
    bool max = false;
    double value = 0.0;
    const std::string* bytes = nullptr;
};

// How bytes move on CPU memory: plain copies and comm::sumInRankOrder; ordering is the barrier.
struct HostCopyReduce {
    static constexpr const char* kName = "shared-host";
    void publish(int) {}      // rank's queued work (none on CPU) is visible to peers
    void acquire(int, int) {} // rank's next work is ordered after peer's publish
    void complete(int) {}     // rank's queued work has finished
    void copy(int, void* dst, const void* src, std::size_t bytes) { std::memcpy(dst, src, bytes); }
    void reduce(int, const void* const* parts, int n, void* out, std::size_t count, DType t) {
        sumInRankOrder(parts, n, out, count, t);
    }
    // A started all-gather's copies: ordered after every rank's publish (beginAside), issued
    // (copyAside), marked (recordAside); joinAside orders the rank's own work after them.
    void beginAside(int) {}
    void copyAside(int r, void* dst, const void* src, std::size_t bytes) {
        copy(r, dst, src, bytes);
    }
    void recordAside(int) {}
    void joinAside(int) {}
};

// Point-to-point messages between a group's ranks (Communicator::send/recv). A posted send
// waits in its pair's queue (sender → receiver, first in first out) until the receiver has
// copied it; the sender's buffer is read in place, so it stays untouched until then (sendDone).
// A rank whose communicator is destroyed leaves: its peers' receives from it, and its
// receivers' pending sends to it, fail at once.
struct SharedMessages {
    struct Posted {
        const void* data = nullptr;
        std::size_t bytes = 0;
        int to = 0;
        bool done = false;
    };
    explicit SharedMessages(int ranks)
        : n(ranks), queues(static_cast<std::size_t>(ranks) * static_cast<std::size_t>(ranks)),
          left(static_cast<std::size_t>(ranks), false) {}
    std::deque<std::shared_ptr<Posted>>& queue(int from, int to) {
        return queues[static_cast<std::size_t>(from) * static_cast<std::size_t>(n) +
                      static_cast<std::size_t>(to)];
    }
    void leave(int rank) {
        std::lock_guard lock(mutex);
        left[static_cast<std::size_t>(rank)] = true;
        cv.notify_all();
    }
    int n;
    std::mutex mutex;
    std::condition_variable cv;
    std::vector<std::deque<std::shared_ptr<Posted>>> queues;
    std::vector<bool> left;
};

template <class Backend> struct SharedGroup {
    SharedGroup(int n, Backend b)
        : backend(std::move(b)), barrier(n), calls(static_cast<std::size_t>(n)),
          started(static_cast<std::size_t>(n)), messages(n) {}
    Backend backend;
    RankBarrier barrier;
    std::vector<SharedCall> calls;
    // A started all-gather's calls: its peers read them after collectives that ran in between
    // have reused `calls`; the all-gather's finish barrier ends their use.
    std::vector<SharedCall> started;
    SharedMessages messages;
};

template <class Backend> class SharedRankCommunicator final : public Communicator {
public:
    SharedRankCommunicator(device::Device* device, std::shared_ptr<SharedGroup<Backend>> group,
                           int rank)
        : Communicator(device), group_(std::move(group)), rank_(rank) {}
    ~SharedRankCommunicator() override {
        group_->barrier.leave(rank_);
        group_->messages.leave(rank_);
    }

    int rank() const override { return rank_; }
    int size() const override { return static_cast<int>(group_->calls.size()); }
    std::string name() const override { return Backend::kName; }

    void barrier() override {
        SharedCall c;
        c.op = SharedCall::Op::Barrier;
        meet(c, "barrier", false);
        finish("barrier", false);
    }

    std::vector<std::string> gatherBytes(const std::string& local, int root) override {
        SharedCall c;
        c.op = SharedCall::Op::Gather;
        c.root = root;
        c.bytes = &local;
        meet(c, "event gather", false);
        std::vector<std::string> out;
        if (rank_ == root)
            for (const SharedCall& peer : group_->calls)
                out.push_back(*peer.bytes);
        finish("event gather", false);
        return out;
    }

protected:
    void doAllGather(const void* shard, void* full, std::size_t count, DType t) override {
        meet(call(SharedCall::Op::AllGather, shard, full, count, t),
             plan::displayText(CollectiveOp::AllGather), true);
        const std::size_t bytes = count * dtypeBytes(t);
        for (int q = 0; q < size(); ++q) {
            char* dst = static_cast<char*>(full) + static_cast<std::size_t>(q) * bytes;
            const void* src = group_->calls[static_cast<std::size_t>(q)].in;
            if (dst != src) group_->backend.copy(rank_, dst, src, bytes); // skip in-place shard
        }
        finish(plan::displayText(CollectiveOp::AllGather), true);
    }

    bool doStartAllGather(const void* shard, void* full, std::size_t count, DType t) override {
        meet(call(SharedCall::Op::AllGather, shard, full, count, t),
             plan::displayText(CollectiveOp::AllGather), true, group_->started, false);
        group_->backend.beginAside(rank_);
        const std::size_t bytes = count * dtypeBytes(t);
        for (int q = 0; q < size(); ++q) {
            char* dst = static_cast<char*>(full) + static_cast<std::size_t>(q) * bytes;
            const void* src = group_->started[static_cast<std::size_t>(q)].in;
            if (dst != src) group_->backend.copyAside(rank_, dst, src, bytes);
        }
        group_->backend.recordAside(rank_);
        return true;
    }

    void doFinishAllGather() override {
        group_->backend.joinAside(rank_);
        finish(plan::displayText(CollectiveOp::AllGather),
               true); // nobody reads a shard any more; the gathered data is here
    }

    void doReduceScatter(const void* full, void* shard, std::size_t count, DType t) override {
        meet(call(SharedCall::Op::ReduceScatter, full, shard, count, t),
             plan::displayText(CollectiveOp::ReduceScatter), true);
        std::vector<const void*> parts = chunkOfEveryRank(rank_, count, t);
        group_->backend.reduce(rank_, parts.data(), size(), shard, count, t);
        finish(plan::displayText(CollectiveOp::ReduceScatter), true);
    }

    void doAllReduce(void* data, std::size_t count, DType t) override {
        const auto n = static_cast<std::size_t>(size());
        const std::size_t chunk = (count + n - 1) / n, eb = dtypeBytes(t);
        // Rank r sums elements [r·chunk, (r+1)·chunk) into its scratch; then everyone copies
        // every rank's scratch. The last chunks may be short or empty.
        auto length = [&](std::size_t r) {
            const std::size_t begin = std::min(count, r * chunk);
            return std::min(chunk, count - begin);
        };
        Scratch scratch(device_, chunk * eb);
        SharedCall c = call(SharedCall::Op::AllReduce, data, data, count, t);
        c.scratch = scratch.data();
        meet(c, plan::displayText(CollectiveOp::AllReduce), true);
        const auto me = static_cast<std::size_t>(rank_);
        if (length(me) > 0) {
            std::vector<const void*> parts = chunkOfEveryRank(rank_, chunk, t);
            group_->backend.reduce(rank_, parts.data(), size(), scratch.data(), length(me), t);
        }
        finish(plan::displayText(CollectiveOp::AllReduce),
               true); // every chunk is summed and nobody reads `data` any more
        for (std::size_t q = 0; q < n; ++q)
            if (length(q) > 0)
                group_->backend.copy(rank_, static_cast<char*>(data) + q * chunk * eb,
                                     group_->calls[q].scratch, length(q) * eb);
        finish(plan::displayText(CollectiveOp::AllReduce),
               true); // nobody reads a scratch any more: it may be freed
    }

    void doBroadcast(void* data, std::size_t bytes, int root) override {
        SharedCall c = call(SharedCall::Op::Broadcast, data, data, bytes, DType::F32);
        c.root = root;
        meet(c, plan::displayText(CollectiveOp::Broadcast), true);
        if (rank_ != root && bytes > 0)
            group_->backend.copy(rank_, data, group_->calls[static_cast<std::size_t>(root)].in,
                                 bytes);
        finish(plan::displayText(CollectiveOp::Broadcast), true);
    }

    double doScalar(double value, bool max) override {
        SharedCall c;
        c.op = SharedCall::Op::Scalar;
        c.value = value;
        c.max = max;
        meet(c, max ? "scalar max" : "scalar sum", false);
        double out = max ? group_->calls[0].value : 0.0;
        for (const SharedCall& peer : group_->calls) // rank order: the same result everywhere
            out = max ? std::max(out, peer.value) : out + peer.value;
        finish(max ? "scalar max" : "scalar sum", false);
        return out;
    }

    std::uint64_t doSend(const void* data, std::size_t bytes, int peer) override {
        auto posted = std::make_shared<SharedMessages::Posted>();
        posted->data = data;
        posted->bytes = bytes;
        posted->to = peer;
        group_->backend.publish(rank_); // the data the rank queued is visible to the receiver
        SharedMessages& m = group_->messages;
        {
            std::lock_guard lock(m.mutex);
            m.queue(rank_, peer).push_back(posted);
            m.cv.notify_all();
        }
        const std::uint64_t handle = nextSend_++;
        sends_.emplace_back(handle, std::move(posted));
        return handle;
    }

    bool doSendDone(std::uint64_t handle, bool wait) override {
        const auto it = std::find_if(sends_.begin(), sends_.end(),
                                     [&](const auto& s) { return s.first == handle; });
        if (it == sends_.end())
            throw Error(ErrorKind::Internal, "no send " + std::to_string(handle) + " is pending");
        SharedMessages& m = group_->messages;
        std::unique_lock lock(m.mutex);
        const SharedMessages::Posted& p = *it->second;
        if (wait) {
            const char* what = plan::displayText(CollectiveOp::PipeSend);
            const auto deadline = std::chrono::steady_clock::now() + timeout();
            while (!p.done) {
                if (m.left[static_cast<std::size_t>(p.to)]) leftGroup(what, p.to);
                if (m.cv.wait_until(lock, deadline) == std::cv_status::timeout && !p.done)
                    timedOut(what, p.to);
            }
        }
        if (!p.done) return false;
        lock.unlock();
        sends_.erase(it);
        return true;
    }

    std::vector<std::uint64_t> doCancelSends() override {
        SharedMessages& m = group_->messages;
        std::unique_lock lock(m.mutex);
        for (const auto& [handle, posted] : sends_) {
            auto& q = m.queue(rank_, posted->to);
            const auto at = std::find(q.begin(), q.end(), posted);
            if (at != q.end()) {
                q.erase(at);
                continue;
            }
            // Taken: the receiver is copying it now (no wait in between), has, or refused it
            // (done either way), or left (its thread unwound: it reads nothing more).
            m.cv.wait(lock,
                      [&] { return posted->done || m.left[static_cast<std::size_t>(posted->to)]; });
        }
        sends_.clear();
        return {};
    }

    void doRecv(void* data, std::size_t bytes, int peer) override {
        const char* what = plan::displayText(CollectiveOp::PipeRecv);
        SharedMessages& m = group_->messages;
        std::shared_ptr<SharedMessages::Posted> posted;
        {
            std::unique_lock lock(m.mutex);
            auto& q = m.queue(peer, rank_);
            const auto deadline = std::chrono::steady_clock::now() + timeout();
            while (q.empty()) {
                if (m.left[static_cast<std::size_t>(peer)]) leftGroup(what, peer);
                if (m.cv.wait_until(lock, deadline) == std::cv_status::timeout && q.empty())
                    timedOut(what, peer);
            }
            posted = q.front();
            q.pop_front();
        }
        if (posted->bytes != bytes) {
            const std::string reason = "rank " + std::to_string(worldRankOf(rank_)) + ": " + what +
                                       " of " + std::to_string(bytes) + " bytes got a message of " +
                                       std::to_string(posted->bytes) + " bytes from rank " +
                                       std::to_string(worldRankOf(peer));
            {
                std::lock_guard lock(m.mutex); // the sender waits for it no more
                posted->done = true;
                m.cv.notify_all();
            }
            group_->barrier.breakWith(reason);
            throw Error(ErrorKind::Internal, reason);
        }
        group_->backend.acquire(rank_, peer);
        if (bytes > 0) group_->backend.copy(rank_, data, posted->data, bytes);
        group_->backend.complete(rank_); // the copy is done: the sender may reuse its buffer
        std::lock_guard lock(m.mutex);
        posted->done = true;
        m.cv.notify_all();
    }

private:
    // A point-to-point wait's ends, in world ranks.
    [[noreturn]] void leftGroup(const char* what, int peer) const {
        throw Error(ErrorKind::Comm, "rank " + std::to_string(worldRankOf(rank_)) + ": " + what +
                                         " can never complete: rank " +
                                         std::to_string(worldRankOf(peer)) + " has left the group");
    }
    [[noreturn]] void timedOut(const char* what, int peer) const {
        throw CollectiveTimeout("rank " + std::to_string(worldRankOf(rank_)) + ": " + what +
                                    " timed out after " + std::to_string(timeout().count()) +
                                    " ms waiting for rank(s) " + std::to_string(worldRankOf(peer)),
                                what, {worldRankOf(peer)}, size());
    }
    // A barrier's timeout names group ranks: the same in world ranks.
    void arrive(const char* what) {
        try {
            group_->barrier.arriveAndWait(rank_, timeout(), what);
        } catch (const CollectiveTimeout& e) {
            std::vector<int> missing;
            std::string names;
            for (const int q : e.missing()) {
                missing.push_back(worldRankOf(q));
                names += (names.empty() ? "" : ", ") + std::to_string(worldRankOf(q));
            }
            throw CollectiveTimeout("rank " + std::to_string(worldRankOf(rank_)) + ": " + what +
                                        " timed out after " + std::to_string(timeout().count()) +
                                        " ms waiting for rank(s) " + names,
                                    e.collective(), std::move(missing), e.groupSize());
        }
    }

    // comm_buffer in the rank's ledger (device memory for a CudaDevice), heap without a device.
    class Scratch {
    public:
        Scratch(device::Device* dev, std::uint64_t bytes) {
            if (dev)
                buffer_ = dev->allocate(bytes, {Category::CommBuffer, Tier::Device, kNoUnit});
            else
                heap_.resize(bytes);
        }
        void* data() { return buffer_.empty() ? static_cast<void*>(heap_.data()) : buffer_.data(); }

    private:
        device::Buffer buffer_;
        std::vector<char> heap_;
    };

    static SharedCall call(SharedCall::Op op, const void* in, void* out, std::size_t count,
                           DType t) {
        SharedCall c;
        c.op = op;
        c.in = in;
        c.out = out;
        c.count = count;
        c.type = t;
        return c;
    }

    // Chunk `r` (of `count` elements) of every rank's input buffer, in rank order.
    std::vector<const void*> chunkOfEveryRank(int r, std::size_t count, DType t) const {
        std::vector<const void*> parts;
        for (const SharedCall& peer : group_->calls)
            parts.push_back(static_cast<const char*>(peer.in) +
                            static_cast<std::size_t>(r) * count * dtypeBytes(t));
        return parts;
    }

    // Steps 1–2: publish, barrier, check that everyone called the same thing, order after peers.
    void meet(const SharedCall& mine, const char* what, bool device) {
        meet(mine, what, device, group_->calls, true);
    }
    // acquire = false: the rank's own stream is not ordered after the peers (a started
    // all-gather orders only its aside copies, so this rank's compute is not held back).
    void meet(const SharedCall& mine, const char* what, bool device, std::vector<SharedCall>& slots,
              bool acquire) {
        slots[static_cast<std::size_t>(rank_)] = mine;
        if (device) group_->backend.publish(rank_);
        arrive(what);
        const SharedCall& first = slots[0];
        for (std::size_t q = 1; q < slots.size(); ++q) {
            const SharedCall& c = slots[q];
            if (c.op != first.op || c.count != first.count || c.type != first.type ||
                c.root != first.root || c.max != first.max) {
                const std::string reason =
                    "collective mismatch in " + std::string(what) + ": rank 0 and rank " +
                    std::to_string(q) + " called different collectives (op " +
                    std::to_string(static_cast<int>(first.op)) + " vs " +
                    std::to_string(static_cast<int>(c.op)) + ", count " +
                    std::to_string(first.count) + " vs " + std::to_string(c.count) + ")";
                group_->barrier.breakWith(reason);
                throw Error(ErrorKind::Internal, reason);
            }
        }
        if (device && acquire)
            for (int q = 0; q < size(); ++q)
                if (q != rank_) group_->backend.acquire(rank_, q);
    }

    // Step 4: this rank's reads are done; after the barrier every peer's are too.
    void finish(const char* what, bool device) {
        if (device) group_->backend.publish(rank_);
        arrive(what);
        if (!device) return;
        for (int q = 0; q < size(); ++q)
            if (q != rank_) group_->backend.acquire(rank_, q);
        group_->backend.complete(rank_);
    }

    std::shared_ptr<SharedGroup<Backend>> group_;
    int rank_;
    std::vector<std::pair<std::uint64_t, std::shared_ptr<SharedMessages::Posted>>> sends_;
    std::uint64_t nextSend_ = 1;
};

// One communicator per rank for ranks that are threads of this process, over a Backend.
// devices[r] is rank r's device (events and comm_buffer scratch; may be null on CPU).
template <class Backend>
std::vector<std::unique_ptr<Communicator>>
makeSharedCommunicators(const std::vector<device::Device*>& devices, Backend backend) {
    if (devices.empty())
        throw Error(ErrorKind::InvalidArgument, "a shared group needs at least one rank");
    auto group = std::make_shared<SharedGroup<Backend>>(static_cast<int>(devices.size()),
                                                        std::move(backend));
    std::vector<std::unique_ptr<Communicator>> out;
    for (std::size_t r = 0; r < devices.size(); ++r)
        out.push_back(std::make_unique<SharedRankCommunicator<Backend>>(devices[r], group,
                                                                        static_cast<int>(r)));
    return out;
}

// Ranks as threads on CPU memory.
inline std::vector<std::unique_ptr<Communicator>>
makeSharedHostCommunicators(const std::vector<device::Device*>& devices) {
    return makeSharedCommunicators(devices, HostCopyReduce{});
}

// Ranks as threads on ONE GPU (--shared-device): each rank's CudaDevice brings its stream and
// memory pool; buffers passed to the collectives are device memory. Rank r's collectives must
// be called from the thread that uses devices[r]. Defined in comm_cuda (CUDA builds only).
std::vector<std::unique_ptr<Communicator>>
makeSharedDeviceCommunicators(const std::vector<device::CudaDevice*>& devices);

} // namespace shardscope::comm
