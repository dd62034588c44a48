#include "comm/mpi_communicator.h"

#include "core/error.h"
#include "core/numeric.h"
#include "device/device.h"
#include "plan/collective.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mpi.h>
#include <thread>
#include <vector>

namespace shardscope::comm {

bool mpiCompiledIn() {
    return true;
}

namespace {

void check(int rc, const char* what) {
    if (rc == MPI_SUCCESS) return;
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, text, &len);
    throw Error(ErrorKind::Comm,
                std::string(what) + " failed: " + std::string(text, static_cast<std::size_t>(len)));
}

// Sum of bf16 values in fp32, rounded once per pair (MPI reduces pairwise).
void bf16Sum(void* in, void* inout, int* len, MPI_Datatype*) {
    const auto* a = static_cast<const Bf16*>(in);
    auto* b = static_cast<Bf16*>(inout);
    for (int i = 0; i < *len; ++i)
        b[i] = toBf16(toFloat(a[i]) + toFloat(b[i]));
}

MPI_Op bf16SumOp() {
    static MPI_Op op = [] {
        MPI_Op o;
        MPI_Op_create(&bf16Sum, 1, &o);
        return o;
    }();
    return op;
}

MPI_Datatype mpiType(DType t) {
    return t == DType::F32 ? MPI_FLOAT : MPI_UINT16_T;
}
MPI_Op sumOp(DType t) {
    return t == DType::F32 ? MPI_SUM : bf16SumOp();
}

// Scratch memory for deterministic reductions, counted in the ledger as comm_buffer.
class Scratch {
public:
    Scratch(device::Device* dev, std::uint64_t bytes) {
        if (dev)
            buffer_ = dev->allocate(bytes, {Category::CommBuffer, Tier::Device, kNoUnit});
        else
            heap_.resize(bytes);
    }
    char* data() { return buffer_.empty() ? heap_.data() : buffer_.ptr<char>(); }

private:
    device::Buffer buffer_;
    std::vector<char> heap_;
};

class MpiCommunicator final : public Communicator {
public:
    MpiCommunicator(device::Device* dev, MPI_Comm comm, bool owned)
        : Communicator(dev), comm_(comm), owned_(owned) {
        MPI_Comm_rank(comm_, &rank_);
        MPI_Comm_size(comm_, &size_);
        if (comm_ == MPI_COMM_WORLD) return;
        // A sub-group's members in the world's numbering: what messages and timeouts name.
        MPI_Group group = MPI_GROUP_NULL, world = MPI_GROUP_NULL;
        std::vector<int> mine(static_cast<std::size_t>(size_)), theirs(mine.size());
        for (int r = 0; r < size_; ++r)
            mine[static_cast<std::size_t>(r)] = r;
        if (MPI_Comm_group(comm_, &group) == MPI_SUCCESS &&
            MPI_Comm_group(MPI_COMM_WORLD, &world) == MPI_SUCCESS &&
            MPI_Group_translate_ranks(group, size_, mine.data(), world, theirs.data()) ==
                MPI_SUCCESS)
            setWorldRanks(theirs);
        if (group != MPI_GROUP_NULL) MPI_Group_free(&group);
        if (world != MPI_GROUP_NULL) MPI_Group_free(&world);
    }
    ~MpiCommunicator() override {
        if (owned_) MPI_Comm_free(&comm_);
    }
    int rank() const override { return rank_; }
    int size() const override { return size_; }
    std::string name() const override { return "mpi"; }
    void barrier() override {
        noteEntered("barrier", kNoUnit);
        const Leave leave;
        MPI_Request req;
        check(MPI_Ibarrier(comm_, &req), "MPI_Ibarrier");
        wait(req, "barrier");
    }

    std::vector<std::string> gatherBytes(const std::string& local, int root) override {
        noteEntered("event gather", kNoUnit);
        const Leave leave;
        const int mine = toInt(local.size());
        std::vector<int> sizes(rank_ == root ? static_cast<std::size_t>(size_) : 0);
        MPI_Request req;
        check(MPI_Igather(&mine, 1, MPI_INT, sizes.data(), 1, MPI_INT, root, comm_, &req),
              "MPI_Igather");
        wait(req, "event gather");
        std::vector<int> displs(sizes.size());
        std::string all;
        if (rank_ == root) {
            std::size_t total = 0;
            for (std::size_t r = 0; r < sizes.size(); ++r) {
                displs[r] = toInt(total);
                total += static_cast<std::size_t>(sizes[r]);
            }
            all.resize(total);
        }
        check(MPI_Igatherv(local.data(), mine, MPI_BYTE, all.data(), sizes.data(), displs.data(),
                           MPI_BYTE, root, comm_, &req),
              "MPI_Igatherv");
        wait(req, "event gather");
        std::vector<std::string> out;
        for (std::size_t r = 0; r < sizes.size(); ++r)
            out.push_back(all.substr(static_cast<std::size_t>(displs[r]),
                                     static_cast<std::size_t>(sizes[r])));
        return out;
    }

protected:
    void doAllGather(const void* shard, void* full, std::size_t count, DType t) override {
        MPI_Request req;
        const void* send = shard;
        // In place when the shard already sits at this rank's slot of the full buffer.
        if (shard == static_cast<const char*>(full) + rank_ * count * dtypeBytes(t))
            send = MPI_IN_PLACE;
        check(MPI_Iallgather(send, toInt(count), mpiType(t), full, toInt(count), mpiType(t), comm_,
                             &req),
              "MPI_Iallgather");
        wait(req, plan::displayText(CollectiveOp::AllGather));
    }

    bool doStartAllGather(const void* shard, void* full, std::size_t count, DType t) override {
        const void* send = shard;
        if (shard == static_cast<const char*>(full) + rank_ * count * dtypeBytes(t))
            send = MPI_IN_PLACE;
        check(MPI_Iallgather(send, toInt(count), mpiType(t), full, toInt(count), mpiType(t), comm_,
                             &started_),
              "MPI_Iallgather");
        return true;
    }

    // Progress: MPI moves a started collective only inside MPI calls (this wait, and the waits
    // of collectives called meanwhile), so time spent computing before the wait hides nothing
    // on its own; what the wait still takes is the exposed part, and the span shows it.
    void doFinishAllGather() override {
        wait(started_, plan::displayText(CollectiveOp::AllGather));
    }

    void doReduceScatter(const void* full, void* shard, std::size_t count, DType t) override {
        if (!deterministic()) {
            MPI_Request req;
            check(MPI_Ireduce_scatter_block(full, shard, toInt(count), mpiType(t), sumOp(t), comm_,
                                            &req),
                  "MPI_Ireduce_scatter_block");
            wait(req, plan::displayText(CollectiveOp::ReduceScatter));
            return;
        }
        // Every rank receives everybody's copy of its chunk and sums them in rank order.
        const std::size_t chunkBytes = count * dtypeBytes(t);
        Scratch recv(device_, chunkBytes * static_cast<std::size_t>(size_));
        alltoall(full, recv.data(), count, t);
        sumChunks(recv.data(), shard, count, t);
    }

    void doAllReduce(void* data, std::size_t count, DType t) override {
        if (!deterministic()) {
            MPI_Request req;
            check(
                MPI_Iallreduce(MPI_IN_PLACE, data, toInt(count), mpiType(t), sumOp(t), comm_, &req),
                "MPI_Iallreduce");
            wait(req, plan::displayText(CollectiveOp::AllReduce));
            return;
        }
        // Deterministic all-reduce = padded reduce-scatter in rank order + all-gather, so each
        // element is summed exactly as the reduce-scatter of ZeRO/FSDP sums it.
        const std::size_t n = static_cast<std::size_t>(size_);
        const std::size_t chunk = (count + n - 1) / n;
        const std::size_t eb = dtypeBytes(t);
        Scratch staging(device_, chunk * n * eb);
        Scratch recv(device_, chunk * n * eb);
        std::memcpy(staging.data(), data, count * eb);
        std::memset(staging.data() + count * eb, 0, (chunk * n - count) * eb);
        alltoall(staging.data(), recv.data(), chunk, t);
        char* mine = staging.data() + static_cast<std::size_t>(rank_) * chunk * eb;
        sumChunks(recv.data(), mine, chunk, t);
        MPI_Request req;
        check(MPI_Iallgather(MPI_IN_PLACE, toInt(chunk), mpiType(t), staging.data(), toInt(chunk),
                             mpiType(t), comm_, &req),
              "MPI_Iallgather");
        wait(req, plan::displayText(CollectiveOp::AllReduce));
        std::memcpy(data, staging.data(), count * eb);
    }

    void doBroadcast(void* data, std::size_t bytes, int root) override {
        MPI_Request req;
        check(MPI_Ibcast(data, toInt(bytes), MPI_BYTE, root, comm_, &req), "MPI_Ibcast");
        wait(req, plan::displayText(CollectiveOp::Broadcast));
    }

    double doScalar(double value, bool max) override {
        if (!max && deterministic()) {
            // Gather all values and add them in rank order: the same sum on every rank, always.
            std::vector<double> all(static_cast<std::size_t>(size_));
            MPI_Request req;
            check(MPI_Iallgather(&value, 1, MPI_DOUBLE, all.data(), 1, MPI_DOUBLE, comm_, &req),
                  "MPI_Iallgather");
            wait(req, "scalar sum");
            double sum = 0;
            for (double v : all)
                sum += v;
            return sum;
        }
        double out = 0;
        MPI_Request req;
        check(MPI_Iallreduce(&value, &out, 1, MPI_DOUBLE, max ? MPI_MAX : MPI_SUM, comm_, &req),
              "MPI_Iallreduce");
        wait(req, max ? "scalar max" : "scalar sum");
        return out;
    }

private:
    struct Leave {
        ~Leave() { noteLeft(); }
    };

    static int toInt(std::size_t count) {
        if (count > static_cast<std::size_t>(INT32_MAX))
            throw Error(ErrorKind::Internal, "collective of " + std::to_string(count) +
                                                 " elements exceeds MPI's int count");
        return static_cast<int>(count);
    }

    void alltoall(const void* send, void* recv, std::size_t count, DType t) {
        MPI_Request req;
        check(MPI_Ialltoall(send, toInt(count), mpiType(t), recv, toInt(count), mpiType(t), comm_,
                            &req),
              "MPI_Ialltoall");
        wait(req, plan::displayText(CollectiveOp::ReduceScatter));
    }

    void sumChunks(const char* recv, void* out, std::size_t count, DType t) const {
        std::vector<const void*> parts(static_cast<std::size_t>(size_));
        for (int r = 0; r < size_; ++r)
            parts[static_cast<std::size_t>(r)] =
                recv + static_cast<std::size_t>(r) * count * dtypeBytes(t);
        sumInRankOrder(parts.data(), size_, out, count, t);
    }

    // Point-to-point on one tag: MPI keeps the messages between two ranks of a communicator in
    // order, which is the order the schedule sends them.
    static constexpr int kPipeTag = 7;

    std::uint64_t doSend(const void* data, std::size_t bytes, int peer) override {
        MPI_Request req;
        check(MPI_Isend(data, toInt(bytes), MPI_BYTE, peer, kPipeTag, comm_, &req), "MPI_Isend");
        const std::uint64_t handle = nextSend_++;
        sends_.push_back({handle, req, peer});
        return handle;
    }

    bool doSendDone(std::uint64_t handle, bool wait) override {
        const auto it = std::find_if(sends_.begin(), sends_.end(),
                                     [&](const PendingSend& s) { return s.handle == handle; });
        if (it == sends_.end())
            throw Error(ErrorKind::Internal, "no send " + std::to_string(handle) + " is pending");
        const char* what = plan::displayText(CollectiveOp::PipeSend);
        if (wait) {
            waitPeer(it->req, what, it->peer);
        } else {
            int done = 0;
            check(MPI_Test(&it->req, &done, MPI_STATUS_IGNORE), what);
            if (!done) return false;
        }
        sends_.erase(it);
        return true;
    }

    void doRecv(void* data, std::size_t bytes, int peer) override {
        const char* what = plan::displayText(CollectiveOp::PipeRecv);
        MPI_Request req;
        check(MPI_Irecv(data, toInt(bytes), MPI_BYTE, peer, kPipeTag, comm_, &req), "MPI_Irecv");
        MPI_Status status{};
        try {
            waitPeer(req, what, peer, &status);
        } catch (...) {
            // `data` is freed as the error unwinds: no late message may land in it. A receive
            // whose message has begun to arrive may not cancel (and MPI_Wait would then hang on
            // a stopped sender): it gets a moment, then goes back to MPI, and the caller keeps
            // its buffer (receiveAbandoned).
            std::vector<MPI_Request> one = {req};
            receiveAbandoned_ = !withdraw(one).empty();
            throw;
        }
        int got = 0;
        MPI_Get_count(&status, MPI_BYTE, &got);
        if (static_cast<std::size_t>(got) != bytes)
            throw Error(ErrorKind::Internal,
                        std::string(what) + " on rank " + std::to_string(worldRankOf(rank_)) +
                            " expected " + std::to_string(bytes) + " bytes from rank " +
                            std::to_string(worldRankOf(peer)) + ", got " + std::to_string(got));
    }

    // Cancels requests and gives them one moment together to complete (MPI may complete one
    // instead, or not cancel a message already under way); those still pending are released to
    // MPI. Returns their indices.
    static std::vector<std::size_t> withdraw(std::vector<MPI_Request>& reqs) {
        for (MPI_Request& r : reqs)
            MPI_Cancel(&r);
        std::vector<bool> done(reqs.size(), false);
        std::size_t left = reqs.size();
        const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
        while (left > 0 && std::chrono::steady_clock::now() < until)
            for (std::size_t i = 0; i < reqs.size(); ++i) {
                int flag = 0;
                if (done[i] || MPI_Test(&reqs[i], &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS)
                    continue;
                if (flag) {
                    done[i] = true;
                    --left;
                }
            }
        std::vector<std::size_t> pending;
        for (std::size_t i = 0; i < reqs.size(); ++i)
            if (!done[i]) {
                MPI_Request_free(&reqs[i]);
                pending.push_back(i);
            }
        return pending;
    }

    std::vector<std::uint64_t> doCancelSends() override {
        // The job is ending: the sends still pending after withdraw are named, their buffers
        // must stay.
        std::vector<MPI_Request> reqs;
        for (const PendingSend& s : sends_)
            reqs.push_back(s.req);
        std::vector<std::uint64_t> pending;
        for (const std::size_t i : withdraw(reqs))
            pending.push_back(sends_[i].handle);
        sends_.clear();
        return pending;
    }

    // Polls instead of MPI_Wait so a dead or stuck peer becomes an error, never a hang.
    // Non-blocking collectives only progress inside MPI_Test, so the loop never sleeps: it
    // yields the core (ranks may outnumber cores).
    void wait(MPI_Request& req, const char* what) const { waitPeer(req, what, -1); }

    // As wait(), for a message with one peer (peer ≥ 0): a timeout names it.
    // Time this process did not run (stopped by SIGSTOP) does not count against its peers: a gap
    // of more than half a second between two polls moves the deadline on, so a rank stopped
    // while it waits, then resumed by mpirun's tear-down, does not time out itself and stand in
    // for the stuck one.
    void waitPeer(MPI_Request& req, const char* what, int peer,
                  MPI_Status* status = MPI_STATUS_IGNORE) const {
        using clock = std::chrono::steady_clock;
        auto deadline = clock::now() + timeout();
        auto last = clock::now();
        for (unsigned polls = 1;; ++polls) {
            int done = 0;
            check(MPI_Test(&req, &done, status), what);
            if (done) return;
            if (polls % 16 == 0) noteAlive();
            const auto now = clock::now();
            if (now - last > std::chrono::milliseconds(500)) deadline += now - last;
            last = now;
            if (now > deadline) {
                const std::string reason =
                    std::string(what) + " on rank " + std::to_string(worldRankOf(rank_)) +
                    " timed out after " + std::to_string(timeout().count() / 1000) +
                    " s waiting for " +
                    (peer < 0 ? std::string("its peers")
                              : "rank " + std::to_string(worldRankOf(peer)));
                if (peer < 0) throw Error(ErrorKind::Comm, reason);
                throw CollectiveTimeout(reason, what, {worldRankOf(peer)}, size_);
            }
            if (polls > 64) std::this_thread::yield();
        }
    }

    MPI_Comm comm_;
    MPI_Request started_ =
        MPI_REQUEST_NULL; // the started all-gather (Communicator::startAllGather)
    bool owned_;
    int rank_ = 0;
    int size_ = 1;
    struct PendingSend {
        std::uint64_t handle;
        MPI_Request req;
        int peer;
    };
    std::vector<PendingSend> sends_;
    std::uint64_t nextSend_ = 1;
};

} // namespace

MpiRuntime::MpiRuntime(int* argc, char*** argv) {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
        // Note: the collectives here are non-blocking so that a wait can time out and name the
        // stuck rank, which puts them on Open MPI's libnbc. Its default in-place iallreduce is a
        // binomial reduce + broadcast that sends every byte twice through one root (0.3-0.7x the
        // busbw of the blocking MPI_Allreduce here); its ring is bandwidth-optimal and sums each
        // element once per rank. Read at MPI_Init; a user's own setting wins.
        ::setenv("OMPI_MCA_coll_libnbc_iallreduce_algorithm", "1", 0);
        int provided = 0;
        check(MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
    }
    // Errors come back as return codes so they can be turned into messages naming the rank.
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

MpiRuntime::~MpiRuntime() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Finalize();
}

void MpiRuntime::abort(int exitCode) {
    MPI_Abort(MPI_COMM_WORLD, exitCode);
    std::_Exit(exitCode);
}

std::unique_ptr<Communicator> makeMpiWorldCommunicator(device::Device* device) {
    return std::make_unique<MpiCommunicator>(device, MPI_COMM_WORLD, false);
}

std::unique_ptr<Communicator> makeMpiSplitCommunicator(device::Device* device, int color, int key) {
    MPI_Comm sub;
    check(MPI_Comm_split(MPI_COMM_WORLD, color, key, &sub), "MPI_Comm_split");
    MPI_Comm_set_errhandler(sub, MPI_ERRORS_RETURN);
    return std::make_unique<MpiCommunicator>(device, sub, true);
}

} // namespace shardscope::comm
