// The CUDA backend of the shared-device rendezvous (see the header for the protocol): ranks are
// threads of one process on one GPU, each with its own stream and memory pool. Copies and
// rank-order sums run on the calling rank's stream; an event per rank orders them after the
// peers' writes (publish → cudaEventRecord, acquire → cudaStreamWaitEvent). The host barrier
// between the steps guarantees an event is recorded before anyone waits on it.
//
// Re-recording a rank's event for the next step while a slow peer has not yet waited on the
// previous record is harmless: cudaStreamWaitEvent then waits for a LATER point of the same
// stream, which only adds ordering, and that later point never depends on the waiting peer.
#include "comm/shared_device_communicator.h"

#include "device/cuda_device.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/ops.h"

#include <cuda_runtime_api.h>

namespace shardscope::comm {

namespace {

class DeviceCopyReduce {
public:
    static constexpr const char* kName = "shared-device";

    explicit DeviceCopyReduce(const std::vector<device::CudaDevice*>& devices) {
        for (device::CudaDevice* d : devices) {
            if (!d)
                throw Error(ErrorKind::Internal, "shared-device group: a rank has no CudaDevice");
            if (d->ordinal() != devices.front()->ordinal())
                throw Error(ErrorKind::InvalidArgument,
                            "--shared-device: every rank must use the same GPU");
            streams_.push_back(d->stream());
            // Events and streams belong to the device current when they are made: make the
            // rank's GPU current first (cudaEventRecord fails for an event of another device).
            CUDA_CHECK(cudaSetDevice(d->ordinal()));
            cudaEvent_t e = nullptr;
            // Timing off: these events only order work, and timing makes record/wait dearer.
            CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
            events_.push_back(Event(e));
            CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
            asideEvents_.push_back(Event(e));
            cudaStream_t s = nullptr;
            // Non-blocking: no implicit ordering with the legacy default stream.
            CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
            asideStreams_.push_back(Stream(s));
        }
    }

    void publish(int r) { CUDA_CHECK(cudaEventRecord(event(r), stream(r))); }
    void acquire(int r, int peer) { CUDA_CHECK(cudaStreamWaitEvent(stream(r), event(peer), 0)); }
    // Collectives are blocking, like MPI's: the results are in place when the call returns
    // (and Communicator's busy time is the real duration, not the enqueue time).
    void complete(int r) { CUDA_CHECK(cudaStreamSynchronize(stream(r))); }
    void copy(int r, void* dst, const void* src, std::size_t bytes) {
        CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream(r)));
    }
    void reduce(int r, const void* const* parts, int n, void* out, std::size_t count, DType t) {
        kernels::cuda::sumInRankOrder(
            parts, n, out, count,
            t == DType::F32 ? kernels::cuda::Elem::F32 : kernels::cuda::Elem::Bf16, stream(r));
    }

    // A started all-gather's copies run on the rank's second stream, after every rank's publish
    // of this collective (its own included: the gathered buffer was allocated on its compute
    // stream); the compute stream waits for them only when the all-gather is finished.
    void beginAside(int r) {
        for (std::size_t q = 0; q < events_.size(); ++q)
            CUDA_CHECK(cudaStreamWaitEvent(aside(r), events_[q].get(), 0));
    }
    void copyAside(int r, void* dst, const void* src, std::size_t bytes) {
        CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, aside(r)));
    }
    void recordAside(int r) { CUDA_CHECK(cudaEventRecord(asideEvent(r), aside(r))); }
    void joinAside(int r) { CUDA_CHECK(cudaStreamWaitEvent(stream(r), asideEvent(r), 0)); }

private:
    struct EventDeleter {
        void operator()(CUevent_st* e) const noexcept { cudaEventDestroy(e); }
    };
    using Event = std::unique_ptr<CUevent_st, EventDeleter>;
    struct StreamDeleter {
        void operator()(CUstream_st* s) const noexcept { cudaStreamDestroy(s); }
    };
    using Stream = std::unique_ptr<CUstream_st, StreamDeleter>;

    cudaStream_t stream(int r) const { return streams_[static_cast<std::size_t>(r)]; }
    cudaEvent_t event(int r) const { return events_[static_cast<std::size_t>(r)].get(); }
    cudaStream_t aside(int r) const { return asideStreams_[static_cast<std::size_t>(r)].get(); }
    cudaEvent_t asideEvent(int r) const { return asideEvents_[static_cast<std::size_t>(r)].get(); }

    std::vector<cudaStream_t> streams_;
    std::vector<Event> events_;
    std::vector<Stream> asideStreams_; // one per rank: started all-gathers' copies
    std::vector<Event> asideEvents_;
};

} // namespace

std::vector<std::unique_ptr<Communicator>>
makeSharedDeviceCommunicators(const std::vector<device::CudaDevice*>& devices) {
    if (static_cast<int>(devices.size()) > kernels::cuda::kMaxRankParts)
        throw Error(ErrorKind::InvalidArgument, "--shared-device supports at most " +
                                                    std::to_string(kernels::cuda::kMaxRankParts) +
                                                    " ranks on one GPU");
    std::vector<device::Device*> base(devices.begin(), devices.end());
    return makeSharedCommunicators(base, DeviceCopyReduce(devices));
}

} // namespace shardscope::comm
