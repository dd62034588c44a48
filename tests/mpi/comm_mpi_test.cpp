// MpiCommunicator under a real mpirun: collectives move the right bytes to the right ranks,
// deterministic reductions agree bit for bit between all-reduce and reduce-scatter, the stats
// count what was called, and the event gather brings every rank's bytes to rank 0.
#include "comm/mpi_communicator.h"
#include "core/error.h"
#include "core/ledger.h"
#include "device/cpu_device.h"
#include "device/device.h"
#include "kernels/cpu/bf16.h"

#include <cmath>
#include <cstring>
#include <gtest/gtest.h>
#include <thread>
#include <vector>

using namespace shardscope;
using namespace shardscope::comm;

namespace {

Ledger gLedger;
device::CpuDevice gDevice(gLedger);
std::unique_ptr<Communicator> gComm;

float valueAt(int rank, std::size_t i) {
    // Non-trivial values whose sums depend on order in fp32.
    return std::sin(static_cast<float>(i) * 0.37f + static_cast<float>(rank)) * 1e3f +
           1e-3f * static_cast<float>(rank);
}

} // namespace

TEST(CommMpi, AllGatherPlacesShardsInRankOrder) {
    const int n = gComm->size(), r = gComm->rank();
    const std::size_t count = 1001; // not a multiple of anything convenient
    std::vector<float> shard(count), full(count * static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < count; ++i)
        shard[i] = valueAt(r, i);
    gComm->allGather(shard.data(), full.data(), count, DType::F32, 3);
    for (int src = 0; src < n; ++src)
        for (std::size_t i = 0; i < count; i += 97)
            ASSERT_EQ(full[static_cast<std::size_t>(src) * count + i], valueAt(src, i));
}

TEST(CommMpi, ReduceScatterSumsEachChunk) {
    const int n = gComm->size(), r = gComm->rank();
    const std::size_t count = 513;
    std::vector<float> full(count * static_cast<std::size_t>(n)), shard(count);
    for (std::size_t i = 0; i < full.size(); ++i)
        full[i] = valueAt(r, i);
    gComm->reduceScatter(full.data(), shard.data(), count, DType::F32, 1);
    for (std::size_t i = 0; i < count; ++i) {
        double expect = 0;
        for (int src = 0; src < n; ++src)
            expect += static_cast<double>(valueAt(src, static_cast<std::size_t>(r) * count + i));
        ASSERT_NEAR(static_cast<double>(shard[i]), expect, 1e-2) << i;
    }
}

TEST(CommMpi, DeterministicAllReduceEqualsDeterministicReduceScatterBitwise) {
    const int n = gComm->size(), r = gComm->rank();
    gComm->setDeterministic(true);
    const std::size_t count = 777;
    std::vector<kernels::Bf16> full(count * static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < full.size(); ++i)
        full[i] = kernels::toBf16(valueAt(r, i));
    std::vector<kernels::Bf16> reduced = full;
    gComm->allReduce(reduced.data(), reduced.size(), DType::Bf16, 0);
    std::vector<kernels::Bf16> shard(count);
    gComm->reduceScatter(full.data(), shard.data(), count, DType::Bf16, 0);
    for (std::size_t i = 0; i < count; ++i)
        ASSERT_EQ(shard[i].bits, reduced[static_cast<std::size_t>(r) * count + i].bits) << i;
    gComm->setDeterministic(false);
    // The scratch buffers were counted as comm_buffer and are gone again.
    EXPECT_GT(gLedger.peak().category(Category::CommBuffer), 0u);
    EXPECT_EQ(gLedger.live().category(Category::CommBuffer), 0u);
}

TEST(CommMpi, StatsCountRingBytes) {
    const int n = gComm->size();
    gComm->resetStats();
    std::vector<float> shard(256), full(256 * static_cast<std::size_t>(n));
    gComm->allGather(shard.data(), full.data(), 256, DType::F32, 0);
    const auto& s = gComm->stats();
    const auto ag = static_cast<std::size_t>(CollectiveOp::AllGather);
    EXPECT_EQ(s.calls[ag], 1u);
    EXPECT_EQ(s.payloadBytes[ag], 256u * 4u * static_cast<unsigned>(n));
    EXPECT_EQ(s.sentBytes[ag], 256u * 4u * static_cast<unsigned>(n - 1));
}

TEST(CommMpi, ScalarsAndEventGather) {
    const int n = gComm->size(), r = gComm->rank();
    EXPECT_DOUBLE_EQ(gComm->sumScalar(r + 1.0), n * (n + 1) / 2.0);
    EXPECT_DOUBLE_EQ(gComm->maxScalar(static_cast<double>(r)), n - 1.0);
    const std::string mine(static_cast<std::size_t>(r) * 3, static_cast<char>('a' + r));
    const auto all = gComm->gatherBytes(mine, 0);
    if (r == 0) {
        ASSERT_EQ(all.size(), static_cast<std::size_t>(n));
        for (int src = 0; src < n; ++src)
            EXPECT_EQ(all[static_cast<std::size_t>(src)],
                      std::string(static_cast<std::size_t>(src) * 3, static_cast<char>('a' + src)));
    } else {
        EXPECT_TRUE(all.empty());
    }
}

// Pipeline messages: two to the next rank of a ring and two from the previous one, posted before
// anyone receives; they arrive in order, and a send is complete once received.
TEST(CommMpi, PointToPointMessagesArriveInOrder) {
    const int n = gComm->size(), r = gComm->rank();
    if (n < 2) GTEST_SKIP() << "needs two ranks";
    const std::size_t count = 300000; // beyond the eager limit: a rendezvous
    std::vector<float> a(count), b(count), in(count);
    for (std::size_t i = 0; i < count; ++i) {
        a[i] = valueAt(r, i);
        b[i] = -valueAt(r, i);
    }
    const int next = (r + 1) % n, prev = (r + n - 1) % n;
    const std::uint64_t ta = gComm->send(a.data(), count, DType::F32, next, 0);
    const std::uint64_t tb = gComm->send(b.data(), count, DType::F32, next, 0);
    gComm->recv(in.data(), count, DType::F32, prev, 0);
    for (std::size_t i = 0; i < count; i += 4999)
        ASSERT_EQ(in[i], valueAt(prev, i));
    gComm->recv(in.data(), count, DType::F32, prev, 0);
    for (std::size_t i = 0; i < count; i += 4999)
        ASSERT_EQ(in[i], -valueAt(prev, i));
    gComm->waitSend(ta);
    gComm->waitSend(tb);
    EXPECT_THROW(gComm->sendDone(ta), Error) << "a completed send is no longer pending";
    const auto send = static_cast<std::size_t>(CollectiveOp::PipeSend);
    EXPECT_GE(gComm->stats().sentBytes[send], 2 * count * sizeof(float));
}

// A sub-group's message names world ranks: rank 0 waits in a group of the even ranks for its
// group rank 1, world rank 2, which sends nothing.
TEST(CommMpi, ASilentSendersTimeoutNamesItsWorldRank) {
    const int n = gComm->size(), r = gComm->rank();
    if (n < 3) GTEST_SKIP() << "needs three ranks";
    std::unique_ptr<Communicator> even = makeMpiSplitCommunicator(&gDevice, r % 2, r);
    if (r == 0) {
        even->setTimeout(std::chrono::milliseconds(300));
        std::vector<float> in(8);
        try {
            even->recv(in.data(), in.size(), DType::F32, 1, 0);
            FAIL() << "a message arrived that nobody sent";
        } catch (const CollectiveTimeout& e) {
            EXPECT_EQ(e.missing(), std::vector<int>{2});
            EXPECT_NE(std::string(e.what()).find("waiting for rank 2"), std::string::npos)
                << e.what();
        }
    }
    gComm->barrier();
}

// Runs last: a peer that does not arrive in time is an error naming the rank, not a hang.
TEST(CommMpi, ZLateRankIsATimeoutNotAHang) {
    if (gComm->size() < 2) GTEST_SKIP() << "needs two ranks";
    gComm->setTimeout(std::chrono::milliseconds(400));
    if (gComm->rank() == 0) {
        const auto t0 = std::chrono::steady_clock::now();
        try {
            gComm->barrier();
            FAIL() << "barrier returned although rank 1 was late";
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::Comm);
            EXPECT_NE(std::string(e.what()).find("timed out"), std::string::npos) << e.what();
        }
        EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
    } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(1200));
        gComm->setTimeout(std::chrono::seconds(20));
        gComm->barrier(); // matches rank 0's abandoned barrier, so the job can finish
    }
    gComm->setTimeout(std::chrono::seconds(20));
}

int main(int argc, char** argv) {
    MpiRuntime mpi(&argc, &argv);
    ::testing::InitGoogleTest(&argc, argv);
    gComm = makeMpiWorldCommunicator(&gDevice);
    gComm->setTimeout(std::chrono::seconds(20));
    // Only rank 0 prints, so ctest's log reads like one run.
    if (mpi.worldRank() != 0) {
        auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
        delete listeners.Release(listeners.default_result_printer());
    }
    const int rc = RUN_ALL_TESTS();
    gComm.reset();
    return rc;
}
