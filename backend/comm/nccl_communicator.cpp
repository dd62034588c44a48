#include "comm/nccl_communicator.h"

#include "core/error.h"
#include "device/cuda_device.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/ops.h"
#include "plan/collective.h"

#include <chrono>
#include <cstdint>
#include <cuda_runtime_api.h>
#include <nccl.h>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

namespace shardscope::comm {

namespace {

using Clock = std::chrono::steady_clock;

ncclDataType_t ncclType(DType t) {
    return t == DType::F32 ? ncclFloat32 : ncclBfloat16;
}
kernels::cuda::Elem elem(DType t) {
    return t == DType::F32 ? kernels::cuda::Elem::F32 : kernels::cuda::Elem::Bf16;
}

struct StreamDeleter {
    void operator()(CUstream_st* s) const noexcept { cudaStreamDestroy(s); }
};
struct EventDeleter {
    void operator()(CUevent_st* e) const noexcept { cudaEventDestroy(e); }
};

class NcclCommunicator final : public Communicator {
public:
    NcclCommunicator(device::CudaDevice& dev, std::unique_ptr<Communicator> host)
        : Communicator(&dev), cuda_(dev), host_(std::move(host)), rank_(host_->rank()),
          size_(host_->size()) {
        CUDA_CHECK(cudaSetDevice(dev.ordinal()));
        cudaStream_t s = nullptr;
        CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
        commStream_.reset(s);
        cudaEvent_t e = nullptr;
        CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
        computeReady_.reset(e);
        CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
        commDone_.reset(e);
        CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
        startedDone_.reset(e);

        ncclUniqueId id{};
        if (rank_ == 0) {
            const ncclResult_t rc = ncclGetUniqueId(&id);
            if (rc != ncclSuccess)
                fail("NCCL initialisation",
                     "ncclGetUniqueId: " + std::string(ncclGetErrorString(rc)));
        }
        syncHostSettings();
        host_->broadcast(&id, sizeof id, 0);
        ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
        config.blocking = 0; // every wait below is ours, with a deadline
        ncclComm_t comm = nullptr;
        const ncclResult_t rc = ncclCommInitRankConfig(&comm, size_, id, rank_, &config);
        comm_ = comm;
        settle(rc, "NCCL initialisation");
    }

    ~NcclCommunicator() override {
        if (!comm_) return; // aborted earlier
        // Finalize flushes outstanding operations (collectively); a dead peer can stall it, so
        // it gets the deadline too, and an abort when that passes.
        ncclResult_t rc = ncclCommFinalize(comm_);
        const auto deadline = Clock::now() + timeout();
        while (rc == ncclInProgress && Clock::now() < deadline) {
            std::this_thread::sleep_for(std::chrono::microseconds(100));
            ncclCommGetAsyncError(comm_, &rc);
        }
        if (rc == ncclSuccess)
            ncclCommDestroy(comm_);
        else
            ncclCommAbort(comm_);
    }

    int rank() const override { return rank_; }
    int size() const override { return size_; }
    std::string name() const override { return "nccl"; }

    void barrier() override {
        syncHostSettings();
        host_->barrier();
    }
    std::vector<std::string> gatherBytes(const std::string& local, int root) override {
        syncHostSettings();
        return host_->gatherBytes(local, root);
    }

protected:
    void doAllGather(const void* shard, void* full, std::size_t count, DType t) override {
        // NCCL runs it in place when shard == full + rank·count, as the interface allows.
        run(plan::displayText(CollectiveOp::AllGather), [&] {
            settle(ncclAllGather(shard, full, count, ncclType(t), comm_, comm()),
                   plan::displayText(CollectiveOp::AllGather));
        });
    }

    // A prefetch: issued on the communication stream after the compute stream's work so far,
    // left running while the compute stream goes on; finishing waits for it (deadline, errors)
    // and orders the compute stream after it. Collectives called meanwhile queue behind it on
    // the same stream.
    bool doStartAllGather(const void* shard, void* full, std::size_t count, DType t) override {
        ensureAlive(plan::displayText(CollectiveOp::AllGather));
        CUDA_CHECK(cudaEventRecord(computeReady_.get(), cuda_.stream()));
        CUDA_CHECK(cudaStreamWaitEvent(comm(), computeReady_.get(), 0));
        settle(ncclAllGather(shard, full, count, ncclType(t), comm_, comm()),
               plan::displayText(CollectiveOp::AllGather));
        CUDA_CHECK(cudaEventRecord(startedDone_.get(), comm()));
        return true;
    }

    void doFinishAllGather() override {
        ensureAlive(plan::displayText(CollectiveOp::AllGather));
        waitFor(startedDone_.get(), plan::displayText(CollectiveOp::AllGather));
        CUDA_CHECK(cudaStreamWaitEvent(cuda_.stream(), startedDone_.get(), 0));
    }

    void doReduceScatter(const void* full, void* shard, std::size_t count, DType t) override {
        if (!deterministic()) {
            run(plan::displayText(CollectiveOp::ReduceScatter), [&] {
                settle(ncclReduceScatter(full, shard, count, ncclType(t), ncclSum, comm_, comm()),
                       plan::displayText(CollectiveOp::ReduceScatter));
            });
            return;
        }
        // Every rank receives everybody's copy of its chunk and sums them in rank order.
        Scratch recv(cuda_, count * dtypeBytes(t) * static_cast<std::size_t>(size_));
        run(plan::displayText(CollectiveOp::ReduceScatter), [&] {
            allToAll(full, recv.data(), count, t, plan::displayText(CollectiveOp::ReduceScatter));
            kernels::cuda::sumStridedInRankOrder(recv.data(), count, size_, shard, count, elem(t),
                                                 comm());
        });
    }

    void doAllReduce(void* data, std::size_t count, DType t) override {
        if (!deterministic()) {
            run(plan::displayText(CollectiveOp::AllReduce), [&] {
                settle(ncclAllReduce(data, data, count, ncclType(t), ncclSum, comm_, comm()),
                       plan::displayText(CollectiveOp::AllReduce));
            });
            return;
        }
        // Padded reduce-scatter in rank order + all-gather: each element is summed exactly as
        // the deterministic reduce-scatter of ZeRO/FSDP sums it (the MPI communicator's scheme).
        const auto n = static_cast<std::size_t>(size_);
        const std::size_t chunk = (count + n - 1) / n, eb = dtypeBytes(t);
        Scratch staging(cuda_, chunk * n * eb);
        Scratch recv(cuda_, chunk * n * eb);
        run(plan::displayText(CollectiveOp::AllReduce), [&] {
            CUDA_CHECK(cudaMemcpyAsync(staging.data(), data, count * eb, cudaMemcpyDeviceToDevice,
                                       comm()));
            CUDA_CHECK(
                cudaMemsetAsync(staging.data() + count * eb, 0, (chunk * n - count) * eb, comm()));
            allToAll(staging.data(), recv.data(), chunk, t,
                     plan::displayText(CollectiveOp::AllReduce));
            char* mine = staging.data() + static_cast<std::size_t>(rank_) * chunk * eb;
            kernels::cuda::sumStridedInRankOrder(recv.data(), chunk, size_, mine, chunk, elem(t),
                                                 comm());
            settle(ncclAllGather(mine, staging.data(), chunk, ncclType(t), comm_, comm()),
                   plan::displayText(CollectiveOp::AllReduce));
            CUDA_CHECK(cudaMemcpyAsync(data, staging.data(), count * eb, cudaMemcpyDeviceToDevice,
                                       comm()));
        });
    }

    void doBroadcast(void* data, std::size_t bytes, int root) override {
        run(plan::displayText(CollectiveOp::Broadcast), [&] {
            settle(ncclBroadcast(data, data, bytes, ncclUint8, root, comm_, comm()),
                   plan::displayText(CollectiveOp::Broadcast));
        });
    }

    double doScalar(double value, bool max) override {
        // Host values (loss, squared norms): the host communicator's deterministic sum.
        syncHostSettings();
        return max ? host_->maxScalar(value) : host_->sumScalar(value);
    }

private:
    // comm_buffer in the rank's ledger, from its pool (allocated on the compute stream before
    // run() orders the communication stream after it; freed after run() ordered it back).
    class Scratch {
    public:
        Scratch(device::CudaDevice& dev, std::uint64_t bytes)
            : buffer_(dev.allocate(bytes, {Category::CommBuffer, Tier::Device, kNoUnit})) {}
        char* data() const { return buffer_.ptr<char>(); }

    private:
        device::Buffer buffer_;
    };

    cudaStream_t comm() const { return commStream_.get(); }

    void syncHostSettings() {
        host_->setTimeout(timeout());
        host_->setDeterministic(deterministic());
    }

    // compute stream → [event] → communication stream: issue → [event] → wait with a deadline
    // → compute stream continues after the communication.
    template <class Issue> void run(const char* what, Issue&& issue) {
        ensureAlive(what);
        CUDA_CHECK(cudaEventRecord(computeReady_.get(), cuda_.stream()));
        CUDA_CHECK(cudaStreamWaitEvent(comm(), computeReady_.get(), 0));
        issue();
        CUDA_CHECK(cudaEventRecord(commDone_.get(), comm()));
        waitFor(commDone_.get(), what);
        CUDA_CHECK(cudaStreamWaitEvent(cuda_.stream(), commDone_.get(), 0));
    }

    void ensureAlive(const char* what) const {
        if (!comm_)
            throw Error(ErrorKind::Comm, std::string(what) + " on rank " + std::to_string(rank_) +
                                             ": the NCCL communicator was aborted earlier (" +
                                             aborted_ + ")");
    }

    // Everybody's chunk q of `send` goes to rank q; chunk q of `recv` comes from rank q.
    void allToAll(const void* send, void* recv, std::size_t count, DType t, const char* what) {
        const std::size_t bytes = count * dtypeBytes(t);
        check(ncclGroupStart(), what);
        for (int q = 0; q < size_; ++q) {
            const std::size_t off = static_cast<std::size_t>(q) * bytes;
            check(ncclSend(static_cast<const char*>(send) + off, count, ncclType(t), q, comm_,
                           comm()),
                  what);
            check(ncclRecv(static_cast<char*>(recv) + off, count, ncclType(t), q, comm_, comm()),
                  what);
        }
        settle(ncclGroupEnd(), what);
    }

    void check(ncclResult_t rc, const char* what) {
        if (rc != ncclSuccess && rc != ncclInProgress) fail(what, ncclText(rc));
    }

    // Non-blocking NCCL: a call may return ncclInProgress and finish in the background; nothing
    // may be issued on the communicator (or queued after it) until its state leaves that.
    void settle(ncclResult_t rc, const char* what) {
        check(rc, what);
        const auto deadline = Clock::now() + timeout();
        for (unsigned spins = 0; comm_; ++spins) {
            ncclResult_t state = ncclSuccess;
            check(ncclCommGetAsyncError(comm_, &state), what);
            if (state == ncclSuccess) return;
            if (state != ncclInProgress) fail(what, ncclText(state));
            pause(spins, deadline, what);
        }
    }

    // Polls an end-of-collective event, NCCL's error state and the deadline.
    void waitFor(cudaEvent_t done, const char* what) {
        const auto deadline = Clock::now() + timeout();
        for (unsigned spins = 0;; ++spins) {
            const cudaError_t q = cudaEventQuery(done);
            if (q == cudaSuccess) return;
            if (q != cudaErrorNotReady) CUDA_CHECK(q);
            // cudaErrorNotReady is also stored as this thread's last error: clear it, or the next
            // CUDA_CHECK_LAUNCH (cudaGetLastError) on this thread reports it as a launch failure.
            (void)cudaGetLastError();
            ncclResult_t state = ncclSuccess;
            check(ncclCommGetAsyncError(comm_, &state), what);
            if (state != ncclSuccess && state != ncclInProgress) fail(what, ncclText(state));
            pause(spins, deadline, what);
        }
    }

    void pause(unsigned spins, Clock::time_point deadline, const char* what) {
        if (spins < 1000) return; // short collectives finish while spinning
        if (Clock::now() > deadline)
            fail(what, "timed out after " + std::to_string(timeout().count() / 1000) +
                           " s waiting for its peers");
        std::this_thread::sleep_for(std::chrono::microseconds(50));
    }

    std::string ncclText(ncclResult_t rc) const {
        std::string text = ncclGetErrorString(rc);
        const char* last = comm_ ? ncclGetLastError(comm_) : nullptr;
        if (last && *last) text += ": " + std::string(last);
        return text;
    }

    // Aborts the communicator (so nothing of it can hang later) and throws naming this rank.
    [[noreturn]] void fail(const std::string& what, const std::string& detail) {
        aborted_ =
            what + " on rank " + std::to_string(rank_) + " (" + cuda_.name() + "): " + detail;
        if (comm_) {
            ncclCommAbort(comm_);
            comm_ = nullptr;
        }
        throw Error(ErrorKind::Comm, aborted_ + "; NCCL communicator aborted");
    }

    device::CudaDevice& cuda_;
    std::unique_ptr<Communicator> host_; // outlives comm_'s teardown (destructor body first)
    int rank_;
    int size_;
    std::unique_ptr<CUstream_st, StreamDeleter> commStream_;
    std::unique_ptr<CUevent_st, EventDeleter> computeReady_, commDone_;
    std::unique_ptr<CUevent_st, EventDeleter> startedDone_; // end of the started all-gather
    ncclComm_t comm_ = nullptr;
    std::string aborted_;
};

} // namespace

int localCudaDevice(Communicator& host, int deviceCount) {
    char name[256] = {};
    if (gethostname(name, sizeof name - 1) != 0)
        throw Error(ErrorKind::Internal, "gethostname failed");
    const std::vector<std::string> names = host.gatherBytes(name, 0);
    std::vector<std::int32_t> local(static_cast<std::size_t>(host.size()), 0);
    if (host.rank() == 0)
        for (std::size_t r = 0; r < names.size(); ++r)
            for (std::size_t q = 0; q < r; ++q)
                if (names[q] == names[r]) ++local[r];
    host.broadcast(local.data(), local.size() * sizeof(std::int32_t), 0);
    const int mine = local[static_cast<std::size_t>(host.rank())];
    if (mine >= deviceCount)
        throwInvalid("rank " + std::to_string(host.rank()) + " is rank " + std::to_string(mine) +
                     " on host " + name + ", which has " + std::to_string(deviceCount) +
                     " CUDA device(s): NCCL needs one GPU per rank (several ranks on one GPU: "
                     "--shared-device)");
    return mine;
}

std::unique_ptr<Communicator> makeNcclCommunicator(device::CudaDevice& device,
                                                   std::unique_ptr<Communicator> host) {
    if (!host) throw Error(ErrorKind::Internal, "makeNcclCommunicator: no host communicator");
    return std::make_unique<NcclCommunicator>(device, std::move(host));
}

} // namespace shardscope::comm
