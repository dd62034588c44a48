#pragma once
// The worker's backends: which devices and communicators a rank gets for --backend cpu|cuda,
// under mpirun (one process per rank) or --shared-device (rank threads of one process).
//
//   cpu,  mpirun          CpuDevice + MPI world (HYBRID: MPI split groups); self without MPI
//   cpu,  shared-device   CpuDevice per thread + shared-host groups
//   cuda, mpirun          one GPU per rank (localCudaDevice): CudaDevice + NCCL over the MPI
//                         world (HYBRID: NCCL over MPI split groups); one rank: a shared-device
//                         group of one (no NCCL needed)
//   cuda, shared-device   CudaDevice per thread, all on GPU 0, + shared-device groups
//
// HYBRID_SHARD's groups are the same in every case: shard groups of consecutive ranks
// [k·G, (k+1)·G), replica groups of the ranks with the same index in their shard group.
// CUDA pieces exist when the build has them (SHARDSCOPE_HAVE_CUDA / SHARDSCOPE_HAVE_NCCL);
// otherwise --backend cuda is refused with a line saying what the build lacks.
#include "core/ledger.h"
#include "device/device.h"
#include "rank.h"
#include "train/report.h"
#include "train/run_config.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace shardscope::worker {

// Why --backend cuda cannot run here (no CUDA in this build, or the probe's reason: no driver,
// no device), or nullopt when it can (and always for cpu).
std::optional<std::string> backendUnavailable(const train::RunConfig& config);

// --shared-device: rank r's device on `ledger` (CPU, or GPU 0).
std::unique_ptr<device::Device> makeSharedRankDevice(const train::RunConfig& config,
                                                     Ledger& ledger);
// --shared-device: every rank's communicators over their devices (index = rank), configured.
std::vector<RankComms> makeSharedComms(const train::RunConfig& config,
                                       const std::vector<device::Device*>& devices);

// Under mpirun (or alone): this process's device and communicators. `rank`/`size` are the MPI
// world's. Collective over the world for CUDA (the GPU is chosen from every rank's host name).
struct MpiRankSetup {
    std::unique_ptr<device::Device> device;
    RankComms comms;
};
MpiRankSetup makeMpiRank(const train::RunConfig& config, Ledger& ledger, int rank, int size);

// CudaDevice::measure() of a CUDA rank (nullopt for a CPU device).
std::optional<train::DeviceMemory> measureDevice(device::Device& device);

} // namespace shardscope::worker
