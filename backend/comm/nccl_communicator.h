#pragma once
// NCCL collectives, one GPU per rank. A host communicator (the MPI world communicator in the
// worker; any Communicator in tests) bootstraps it — rank 0's ncclUniqueId is broadcast over it
// — and keeps carrying what is not GPU traffic: barrier, gatherBytes (the events to rank 0) and
// the scalar sums. NCCL itself is private to comm_cuda: the header names no NCCL or MPI type.
//
// Behaviour:
//  - Collectives run on a communication stream of their own, ordered after the rank's compute
//    stream (CudaDevice::stream()) with an event, and the compute stream waits for their end
//    with another, so kernels queued later see the results.
//  - The NCCL communicator is non-blocking (ncclConfig_t::blocking = 0) and every wait polls
//    ncclCommGetAsyncError against the communicator's deadline: a dead or stuck peer becomes
//    Error(Comm) naming this rank, after ncclCommAbort, never a hang.
//  - --deterministic: reduce-scatter and all-reduce exchange chunks (grouped send/recv) and sum
//    them in rank order on the device, as the MPI communicator does on the CPU, so all
//    strategies reduce bit-identically. Otherwise NCCL's own ring/tree sums are used.
//  - Buffers are device memory of the rank's CudaDevice; scratch is comm_buffer in its ledger.
//  - Teardown: ncclCommFinalize then ncclCommDestroy in the destructor (NCCL's MPI example):
//    destroy this communicator before MPI_Finalize (the worker's MpiRuntime outlives it).
#include "comm/communicator.h"

#include <memory>

namespace shardscope::device {
class CudaDevice;
}

namespace shardscope::comm {

// The GPU this rank should use: its index among the ranks on the same host (host names gathered
// over `host`, the approach of NCCL's MPI example). Throws Error(InvalidArgument) when the host
// has fewer GPUs than ranks — NCCL needs one GPU per rank; several ranks on one GPU is
// --shared-device. `deviceCount` is the number of GPUs this process sees.
int localCudaDevice(Communicator& host, int deviceCount);

// `device` must be current on the calling thread (CudaDevice's constructor makes it so).
std::unique_ptr<Communicator> makeNcclCommunicator(device::CudaDevice& device,
                                                   std::unique_ptr<Communicator> host);

} // namespace shardscope::comm
