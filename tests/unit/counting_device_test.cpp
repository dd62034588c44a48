// CountingDevice and the virtual communicator: the ledger of a real device without its memory,
// and the scratch of a real communicator without its peers.
#include "comm/virtual_communicator.h"
#include "core/ledger.h"
#include "device/counting_device.h"
#include "device/ops.h"

#include <cstdint>
#include <gtest/gtest.h>
#include <set>
#include <vector>

namespace shardscope {
namespace {

TEST(countingDevice, CountsLikeADeviceWithoutMemory) {
    Ledger ledger;
    device::CountingDevice dev(ledger);
    EXPECT_FALSE(dev.holdsData());
    const std::uint64_t huge = std::uint64_t{1} << 40; // 1 TiB: nothing is allocated
    std::set<void*> addresses;
    {
        device::Buffer a = dev.allocate(huge, {Category::ParamFull, Tier::Device, 3});
        device::Buffer b = dev.allocate(huge, {Category::AdamM, Tier::Device, 3}, true);
        device::Buffer c = dev.allocateArray<float>(7, {Category::Workspace, Tier::Host, 0});
        for (const device::Buffer* x : {&a, &b, &c}) {
            EXPECT_FALSE(x->empty());
            addresses.insert(x->data());
        }
        EXPECT_EQ(addresses.size(), 3u) << "every buffer has its own address";
        EXPECT_EQ(ledger.live().at(Category::ParamFull, Tier::Device), huge);
        EXPECT_EQ(ledger.liveTierBytes(Tier::Device), 2 * huge);
        EXPECT_EQ(ledger.live().at(Category::Workspace, Tier::Host), 28u);
        a.reset();
        EXPECT_EQ(ledger.liveTierBytes(Tier::Device), huge);
    }
    EXPECT_EQ(ledger.liveBytes(), 0u);
    EXPECT_EQ(ledger.peakTierBytes(Tier::Device), 2 * huge);
    EXPECT_EQ(ledger.allocations(), 3u);
}

TEST(countingDevice, OpsAreNoOpsThatAnswerZeros) {
    Ledger ledger;
    device::CountingDevice dev(ledger);
    device::Buffer b = dev.allocateArray<float>(4, {});
    std::vector<float> host(4, 5.0f);
    dev.ops().download(host.data(), b.data(), 4 * sizeof(float));
    EXPECT_EQ(host, std::vector<float>(4, 0.0f));
    EXPECT_EQ(dev.ops().crossEntropyForward(b.ptr<float>(), nullptr, nullptr, 4, 1), 0.0);
    const device::GradientStats g = dev.ops().gradientStats(b.data(), 4, false);
    EXPECT_TRUE(g.finite);
    EXPECT_EQ(g.maxAbs, 0.0);
}

// Scratch per call: what a deterministic MPI reduction and a shared group allocate.
std::uint64_t scratchPeak(comm::VirtualKind kind, bool deterministic, int size, bool allReduce,
                          std::size_t count) {
    Ledger ledger;
    device::CountingDevice dev(ledger);
    auto c = comm::makeVirtualCommunicator(&dev, size, size - 1, kind);
    c->setDeterministic(deterministic);
    if (allReduce)
        c->allReduce(nullptr, count, comm::DType::Bf16, 0);
    else
        c->reduceScatter(nullptr, nullptr, count, comm::DType::Bf16, 0);
    EXPECT_EQ(ledger.liveBytes(), 0u) << "scratch is freed inside the call";
    return ledger.peak().at(Category::CommBuffer, Tier::Device);
}

TEST(virtualCommunicator, AllocatesTheScratchOfTheRealOne) {
    using comm::VirtualKind;
    // MPI, deterministic: reduce-scatter receives N chunks; all-reduce stages and receives ⌈c/N⌉·N.
    EXPECT_EQ(scratchPeak(VirtualKind::Mpi, true, 4, false, 10), 10u * 2 * 4);
    EXPECT_EQ(scratchPeak(VirtualKind::Mpi, true, 4, true, 10), 2u * 3 * 4 * 2);
    // MPI's own reductions: outside the ledger.
    EXPECT_EQ(scratchPeak(VirtualKind::Mpi, false, 4, false, 10), 0u);
    EXPECT_EQ(scratchPeak(VirtualKind::Mpi, false, 4, true, 10), 0u);
    // A shared group: one chunk for all-reduce, nothing for reduce-scatter.
    EXPECT_EQ(scratchPeak(VirtualKind::SharedGroup, false, 4, true, 10), 3u * 2);
    EXPECT_EQ(scratchPeak(VirtualKind::SharedGroup, true, 4, false, 10), 0u);
    // One rank: no peers, no scratch.
    EXPECT_EQ(scratchPeak(VirtualKind::Mpi, true, 1, true, 10), 0u);
}

TEST(virtualCommunicator, RecordsEveryCollectiveAsARealOneWould) {
    Ledger ledger;
    device::CountingDevice dev(ledger);
    std::vector<Event> events;
    ledger.setSink([&](const Event& e) { events.push_back(e); });
    auto c = comm::makeVirtualCommunicator(&dev, 8, 3, comm::VirtualKind::Mpi);
    EXPECT_EQ(c->size(), 8);
    EXPECT_EQ(c->rank(), 3);
    c->allGather(nullptr, nullptr, 100, comm::DType::F32, 5);
    const auto ticket = c->startAllGather(nullptr, nullptr, 10, comm::DType::Bf16, 6);
    c->finishAllGather(ticket);
    ASSERT_EQ(events.size(), 4u);
    EXPECT_EQ(events[0].kind, EventKind::CollectiveBegin);
    EXPECT_EQ(events[0].collective, CollectiveOp::AllGather);
    EXPECT_EQ(events[0].unit, 5);
    EXPECT_EQ(events[0].bytes, 100u * 4 * 8);
    EXPECT_EQ(events[0].peers, 8);
    EXPECT_EQ(events[3].kind, EventKind::CollectiveEnd);
    EXPECT_EQ(events[3].unit, 6);
    const auto ag = static_cast<std::size_t>(CollectiveOp::AllGather);
    EXPECT_EQ(c->stats().calls[ag], 2u);
    EXPECT_EQ(c->stats().sentBytes[ag], 100u * 4 * 7 + 10u * 2 * 7);
    EXPECT_DOUBLE_EQ(c->sumScalar(1.5), 12.0);
    EXPECT_DOUBLE_EQ(c->maxScalar(1.5), 1.5);
}

} // namespace
} // namespace shardscope
