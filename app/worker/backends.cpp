#include "backends.h"

#include "comm/mpi_communicator.h"
#include "comm/shared_device_communicator.h"
#include "core/error.h"
#include "device/cpu_device.h"
#include "plan/mesh.h"
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

bool hybrid(const train::RunConfig& c) {
    return plan::policyFor(c.strategy).hybrid;
}

// The mesh's colors and groups (TP, DP, HYBRID's shard and replica groups): plan/mesh.h, shared
// with the replay, which tells from them who talked to whom.
using plan::dataColor;
using plan::groupsBy;
using plan::pipeColor;
using plan::replicaColor;
using plan::shardColor;
using plan::tensorColor;

#if SHARDSCOPE_HAVE_CUDA
device::CudaDevice& asCuda(device::Device& d) {
    auto* cuda = dynamic_cast<device::CudaDevice*>(&d);
    if (!cuda) throw Error(ErrorKind::Internal, "a --backend cuda rank has no CudaDevice");
    return *cuda;
}
#endif

// One shared group over `members` (ranks of the job): communicator i belongs to members[i].
std::vector<std::unique_ptr<comm::Communicator>>
sharedGroup(const train::RunConfig& c, const std::vector<device::Device*>& devices,
            const std::vector<int>& members) {
    if (c.backend == train::Backend::Cuda) {
#if SHARDSCOPE_HAVE_CUDA
        std::vector<device::CudaDevice*> cuda;
        for (int r : members)
            cuda.push_back(&asCuda(*devices[static_cast<std::size_t>(r)]));
        return comm::makeSharedDeviceCommunicators(cuda);
#else
        throw Error(ErrorKind::InvalidArgument, "--backend cuda: this build has no CUDA support");
#endif
    }
    std::vector<device::Device*> host;
    for (int r : members)
        host.push_back(devices[static_cast<std::size_t>(r)]);
    return comm::makeSharedHostCommunicators(host);
}

// Hands each member its communicator of one group; returns the raw pointers by rank.
void distribute(std::vector<std::unique_ptr<comm::Communicator>> group,
                const std::vector<int>& members, std::vector<RankComms>& out,
                comm::Communicator* strategy::CommGroups::*slot) {
    for (std::size_t i = 0; i < members.size(); ++i) {
        RankComms& rc = out[static_cast<std::size_t>(members[i])];
        group[i]->setWorldRanks(members);
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
    return std::string(
        "--backend cuda: this build has no CUDA support (configure with nvcc available, "
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

std::vector<RankComms> makeSharedComms(const train::RunConfig& c,
                                       const std::vector<device::Device*>& devices) {
    const int n = static_cast<int>(devices.size());
    std::vector<RankComms> out(devices.size());
    std::vector<int> everyone;
    for (int r = 0; r < n; ++r)
        everyone.push_back(r);
    distribute(sharedGroup(c, devices, everyone), everyone, out, &strategy::CommGroups::world);
    // Separate shared groups, each with its own rendezvous: a rank is in several groups and
    // calls them in the order the model and the strategy do, exactly like the MPI split
    // communicators.
    const int t = c.tensorParallel, d = n / (t * c.pipeParallel);
    if (t > 1 || c.pipeParallel > 1) {
        if (t > 1)
            for (const auto& members : groupsBy(n, [&](int r) { return tensorColor(r, t); }))
                distribute(sharedGroup(c, devices, members), members, out,
                           &strategy::CommGroups::tensor);
        for (const auto& members : groupsBy(n, [&](int r) { return dataColor(r, t, d); }))
            distribute(sharedGroup(c, devices, members), members, out, &strategy::CommGroups::data);
    } else {
        for (RankComms& rc : out)
            rc.groups.data = rc.groups.world;
    }
    if (hybrid(c)) {
        const int g = c.knobs.hybridGroupSize;
        for (const auto& members : groupsBy(n, [&](int r) { return shardColor(r, t, d, g); }))
            distribute(sharedGroup(c, devices, members), members, out,
                       &strategy::CommGroups::shard);
        for (const auto& members : groupsBy(n, [&](int r) { return replicaColor(r, t, d, g); }))
            distribute(sharedGroup(c, devices, members), members, out,
                       &strategy::CommGroups::replica);
    } else {
        for (RankComms& rc : out)
            rc.groups.shard = rc.groups.data;
    }
    if (c.pipeParallel > 1)
        for (const auto& members : groupsBy(n, [&](int r) { return pipeColor(r, t, d); }))
            distribute(sharedGroup(c, devices, members), members, out, &strategy::CommGroups::pipe);
    for (RankComms& rc : out)
        configureComms(rc, c);
    return out;
}

MpiRankSetup makeMpiRank(const train::RunConfig& c, Ledger& ledger, int rank, int size) {
    MpiRankSetup s;
    const bool mpi = comm::mpiCompiledIn();
    const int g = hybrid(c) ? c.knobs.hybridGroupSize : 0;
    const int t = c.tensorParallel, d = size / (t * c.pipeParallel);
    if (c.backend == train::Backend::Cpu) {
        s.device = std::make_unique<device::CpuDevice>(ledger);
        device::Device* dev = s.device.get();
        // A build without MPI still runs one rank (mpirun is then not involved).
        auto add = [&](std::unique_ptr<comm::Communicator> cm) {
            s.comms.owned.push_back(std::move(cm));
            return s.comms.owned.back().get();
        };
        auto split = [&](int color) {
            return add(mpi ? comm::makeMpiSplitCommunicator(dev, color, rank)
                           : comm::makeSelfCommunicator(dev));
        };
        s.comms.groups.world =
            add(mpi ? comm::makeMpiWorldCommunicator(dev) : comm::makeSelfCommunicator(dev));
        s.comms.groups.data = s.comms.groups.world;
        // Every rank splits the same groups in the same order: the TP group, the DP group, the
        // hybrid groups, the pipeline group.
        if (t > 1) s.comms.groups.tensor = split(tensorColor(rank, t));
        if (t > 1 || c.pipeParallel > 1) s.comms.groups.data = split(dataColor(rank, t, d));
        s.comms.groups.shard = s.comms.groups.data;
        if (g > 0) {
            s.comms.groups.shard = split(shardColor(rank, t, d, g));
            s.comms.groups.replica = split(replicaColor(rank, t, d, g));
        }
        if (c.pipeParallel > 1) s.comms.groups.pipe = split(pipeColor(rank, t, d));
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
    s.comms.groups.world = s.comms.groups.data = s.comms.groups.shard = s.comms.owned.back().get();
    auto split = [&](int color) {
        s.comms.owned.push_back(
            comm::makeNcclCommunicator(dev, comm::makeMpiSplitCommunicator(nullptr, color, rank)));
        return s.comms.owned.back().get();
    };
    if (t > 1) {
        s.comms.groups.tensor = split(tensorColor(rank, t));
        s.comms.groups.data = s.comms.groups.shard = split(dataColor(rank, t, d));
    }
    if (g > 0) {
        s.comms.groups.shard = split(shardColor(rank, t, d, g));
        s.comms.groups.replica = split(replicaColor(rank, t, d, g));
    }
    configureComms(s.comms, c);
    return s;
#else
    throwInvalid("--backend cuda with several MPI ranks needs NCCL, which this build lacks (set "
                 "NCCL_HOME and "
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
    out.ledgerPeakBytes = m.ledgerPeak;
    out.poolUsedBytes = m.poolUsed;
    out.poolUsedHighBytes = m.poolUsedHigh;
    out.poolReservedBytes = m.poolReserved;
    out.poolReservedHighBytes = m.poolReservedHigh;
    out.deviceTotalBytes = m.deviceTotal;
    out.deviceUsedBytes = m.deviceUsed();
    out.outsideLedgerBytes = m.outsideLedger();
    out.declaredWorkspaceBytes = m.declaredWorkspace;
    return out;
#else
    (void)d;
    return std::nullopt;
#endif
}

} // namespace shardscope::worker
