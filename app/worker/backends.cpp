#include "backends.h"

#include "comm/mpi_communicator.h"
#include "comm/shared_device_communicator.h"
#include "core/error.h"
#include "device/cpu_device.h"
#include "plan/policy.h"
#include "platform/cuda_probe.h"

#if SHARDSCOPE_HAVE_CUDA
#include "device/cuda_device.h"
#endif
#if SHARDSCOPE_HAVE_NCCL
#include "comm/nccl_communicator.h"
#endif

namespace shardscope::worker {

namespace {

bool hybrid(const train::RunConfig& c) { return plan::policyFor(c.strategy).hybrid; }

// The members of every group of a kind, in rank order within each group: the world, HYBRID's
// shard groups (consecutive ranks) and its replica groups (same index in every shard group).
// This is the layout MPI_Comm_split gives the MPI path (color rank/G resp. rank%G, key rank).
std::vector<std::vector<int>> shardGroups(int n, int g) {
    std::vector<std::vector<int>> out(static_cast<std::size_t>(n / g));
    for (int r = 0; r < n; ++r) out[static_cast<std::size_t>(r / g)].push_back(r);
    return out;
}
std::vector<std::vector<int>> replicaGroups(int n, int g) {
    std::vector<std::vector<int>> out(static_cast<std::size_t>(g));
    for (int r = 0; r < n; ++r) out[static_cast<std::size_t>(r % g)].push_back(r);
    return out;
}

#if SHARDSCOPE_HAVE_CUDA
device::CudaDevice& asCuda(device::Device& d) {
    auto* cuda = dynamic_cast<device::CudaDevice*>(&d);
    if (!cuda) throw Error(ErrorKind::Internal, "a --backend cuda rank has no CudaDevice");
    return *cuda;
}
#endif

// One shared group over `members` (ranks of the job): communicator i belongs to members[i].
std::vector<std::unique_ptr<comm::Communicator>> sharedGroup(const train::RunConfig& c,
                                                             const std::vector<device::Device*>& devices,
                                                             const std::vector<int>& members) {
    if (c.backend == train::Backend::Cuda) {
#if SHARDSCOPE_HAVE_CUDA
        std::vector<device::CudaDevice*> cuda;
        for (int r : members) cuda.push_back(&asCuda(*devices[static_cast<std::size_t>(r)]));
        return comm::makeSharedDeviceCommunicators(cuda);
#else
        throw Error(ErrorKind::InvalidArgument, "--backend cuda: this build has no CUDA support");
#endif
    }
    std::vector<device::Device*> host;
    for (int r : members) host.push_back(devices[static_cast<std::size_t>(r)]);
    return comm::makeSharedHostCommunicators(host);
}

// Hands each member its communicator of one group; returns the raw pointers by rank.
void distribute(std::vector<std::unique_ptr<comm::Communicator>> group, const std::vector<int>& members,
                std::vector<RankComms>& out, comm::Communicator* strategy::CommGroups::*slot) {
    for (std::size_t i = 0; i < members.size(); ++i) {
        RankComms& rc = out[static_cast<std::size_t>(members[i])];
        rc.groups.*slot = group[i].get();
        rc.owned.push_back(std::move(group[i]));
    }
}

} // namespace

std::optional<std::string> backendUnavailable(const train::RunConfig& c) {
    if (c.backend != train::Backend::Cuda) return std::nullopt;
#if SHARDSCOPE_HAVE_CUDA
    const platform::CudaAvailability cuda = platform::probeCuda();
    if (!cuda.available) return "--backend cuda: " + cuda.reason;
    return std::nullopt;
#else
    return std::string("--backend cuda: this build has no CUDA support (configure with nvcc available, "
                       "SHARDSCOPE_CUDA=AUTO or ON)");
#endif
}

std::unique_ptr<device::Device> makeSharedRankDevice(const train::RunConfig& c, Ledger& ledger) {
    if (c.backend == train::Backend::Cuda) {
#if SHARDSCOPE_HAVE_CUDA
        // Every rank on GPU 0, each with its own stream and memory pool (per-rank figures).
        return std::make_unique<device::CudaDevice>(ledger, 0);
#else
        throw Error(ErrorKind::InvalidArgument, "--backend cuda: this build has no CUDA support");
#endif
    }
    return std::make_unique<device::CpuDevice>(ledger);
}

std::vector<RankComms> makeSharedComms(const train::RunConfig& c, const std::vector<device::Device*>& devices) {
    const int n = static_cast<int>(devices.size());
    std::vector<RankComms> out(devices.size());
    std::vector<int> everyone;
    for (int r = 0; r < n; ++r) everyone.push_back(r);
    distribute(sharedGroup(c, devices, everyone), everyone, out, &strategy::CommGroups::world);
    if (hybrid(c)) {
        // Separate shared groups, each with its own rendezvous: a rank is in three groups and
        // calls them in the order the strategy does, exactly like the MPI split communicators.
        const int g = c.knobs.hybridGroupSize;
        for (const auto& members : shardGroups(n, g))
            distribute(sharedGroup(c, devices, members), members, out, &strategy::CommGroups::shard);
        for (const auto& members : replicaGroups(n, g))
            distribute(sharedGroup(c, devices, members), members, out, &strategy::CommGroups::replica);
    } else {
        for (RankComms& rc : out) rc.groups.shard = rc.groups.world;
    }
    for (RankComms& rc : out) configureComms(rc, c);
    return out;
}

MpiRankSetup makeMpiRank(const train::RunConfig& c, Ledger& ledger, int rank, int size) {
    MpiRankSetup s;
    const bool mpi = comm::mpiCompiledIn();
    const int g = hybrid(c) ? c.knobs.hybridGroupSize : 0;
    if (c.backend == train::Backend::Cpu) {
        s.device = std::make_unique<device::CpuDevice>(ledger);
        device::Device* d = s.device.get();
        // A build without MPI still runs one rank (mpirun is then not involved).
        auto add = [&](std::unique_ptr<comm::Communicator> cm) {
            s.comms.owned.push_back(std::move(cm));
            return s.comms.owned.back().get();
        };
        s.comms.groups.world = add(mpi ? comm::makeMpiWorldCommunicator(d) : comm::makeSelfCommunicator(d));
        s.comms.groups.shard = s.comms.groups.world;
        if (g > 0) {
            // Shard groups are consecutive ranks [k·G, (k+1)·G); replicas hold the same shard index.
            s.comms.groups.shard = add(mpi ? comm::makeMpiSplitCommunicator(d, rank / g, rank) : comm::makeSelfCommunicator(d));
            s.comms.groups.replica = add(mpi ? comm::makeMpiSplitCommunicator(d, rank % g, rank) : comm::makeSelfCommunicator(d));
        }
        configureComms(s.comms, c);
        return s;
    }
#if SHARDSCOPE_HAVE_CUDA
    if (size == 1) {
        // One rank needs no NCCL: a shared-device group of one copies on the rank's stream.
        s.device = std::make_unique<device::CudaDevice>(ledger, 0);
        const std::vector<device::Device*> one = {s.device.get()};
        std::vector<RankComms> comms = makeSharedComms(c, one);
        s.comms = std::move(comms.front());
        return s;
    }
#if SHARDSCOPE_HAVE_NCCL
    const platform::CudaAvailability cuda = platform::probeCuda();
    // The host communicator carries NCCL's bootstrap and what is not GPU traffic (event
    // batches, scalars); it has no device, so it emits no events of its own.
    std::unique_ptr<comm::Communicator> host = comm::makeMpiWorldCommunicator(nullptr);
    const int ordinal = comm::localCudaDevice(*host, cuda.deviceCount);
    s.device = std::make_unique<device::CudaDevice>(ledger, ordinal);
    device::CudaDevice& dev = asCuda(*s.device);
    s.comms.owned.push_back(comm::makeNcclCommunicator(dev, std::move(host)));
    s.comms.groups.world = s.comms.groups.shard = s.comms.owned.back().get();
    if (g > 0) {
        s.comms.owned.push_back(comm::makeNcclCommunicator(dev, comm::makeMpiSplitCommunicator(nullptr, rank / g, rank)));
        s.comms.groups.shard = s.comms.owned.back().get();
        s.comms.owned.push_back(comm::makeNcclCommunicator(dev, comm::makeMpiSplitCommunicator(nullptr, rank % g, rank)));
        s.comms.groups.replica = s.comms.owned.back().get();
    }
    configureComms(s.comms, c);
    return s;
#else
    throwInvalid("--backend cuda with several MPI ranks needs NCCL, which this build lacks (set NCCL_HOME and "
                 "reconfigure); several ranks on one GPU: --shared-device --ranks N");
#endif
#else
    (void)ledger;
    (void)rank;
    (void)size;
    throwInvalid("--backend cuda: this build has no CUDA support");
#endif
}

std::optional<train::DeviceMemory> measureDevice(device::Device& d) {
#if SHARDSCOPE_HAVE_CUDA
    if (d.kind() != device::DeviceKind::Cuda) return std::nullopt;
    device::CudaDevice& cuda = asCuda(d);
    const device::CudaMemoryReport m = cuda.measure();
    train::DeviceMemory out;
    out.name = cuda.name();
    out.ordinal = m.ordinal;
    out.ledgerPeak = m.ledgerPeak;
    out.poolUsed = m.poolUsed;
    out.poolUsedHigh = m.poolUsedHigh;
    out.poolReserved = m.poolReserved;
    out.poolReservedHigh = m.poolReservedHigh;
    out.deviceTotal = m.deviceTotal;
    out.deviceUsed = m.deviceUsed();
    out.outsideLedger = m.outsideLedger();
    out.declaredWorkspace = m.declaredWorkspace;
    return out;
#else
    (void)d;
    return std::nullopt;
#endif
}

} // namespace shardscope::worker
