// CudaDevice: buffers from a per-rank stream-ordered pool, counted in the ledger, and the
// device's own figures (pool used/reserved high-water marks, cudaMemGetInfo, memory outside the
// ledger). Without a device only the error path runs: constructing one is InvalidArgument with
// the probe's reason (the message `--backend cuda` prints on this machine).
#include "core/error.h"
#include "core/ledger.h"
#include "device/cuda_device.h"
#include "gpu_test_support.h"

#include <gtest/gtest.h>
#include <vector>

namespace shardscope::device {
namespace {

TEST(gpuDevice, WithoutADeviceConstructionSaysWhy) {
    Ledger ledger;
    const int ordinal = gputest::cuda().available ? gputest::cuda().deviceCount : 0; // never valid
    try {
        CudaDevice dev(ledger, ordinal);
        FAIL() << "constructed " << dev.name();
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
        const std::string what = e.what();
        if (gputest::cuda().available)
            EXPECT_NE(what.find("does not exist"), std::string::npos) << what;
        else
            EXPECT_NE(what.find("--backend cuda: no "), std::string::npos) << what;
    }
    EXPECT_EQ(ledger.allocations(), 0u);
}

class gpuDeviceMem : public ::testing::Test {
protected:
    void SetUp() override { SHARDSCOPE_REQUIRE_CUDA(); }
};

TEST_F(gpuDeviceMem, BuffersAreLedgeredAndThePoolIsMeasured) {
    Ledger ledger;
    CudaDevice dev(ledger, 0);
    EXPECT_EQ(dev.kind(), DeviceKind::Cuda);
    EXPECT_EQ(dev.name().rfind("cuda:0 (", 0), 0u) << dev.name();
    {
        Buffer a = dev.allocate(1'000'000, {Category::ParamShard, Tier::Device, 1});
        Buffer b = dev.allocateArray<float>(250'000, {Category::Activation, Tier::Device, 2});
        Buffer c = dev.allocate(123, {Category::CommBuffer, Tier::Device, kNoUnit});
        EXPECT_EQ(ledger.liveTierBytes(Tier::Device), 2'000'123u);
        const CudaMemoryReport r = dev.measure();
        EXPECT_EQ(r.ledgerLive, 2'000'123u);
        // The pool hands out at least what was asked (it rounds up to its granularity).
        EXPECT_GE(r.poolUsed, r.ledgerLive);
        EXPECT_LT(r.poolUsed, r.ledgerLive + 3 * (2u << 20))
            << "more than 2 MiB rounding per buffer?";
        EXPECT_GE(r.poolUsedHigh, r.poolUsed);
        EXPECT_GE(r.poolReserved, r.poolUsed);
        EXPECT_GE(r.allPoolsReserved, r.poolReserved);
        EXPECT_GT(r.deviceTotal, 0u);
        EXPECT_GE(r.deviceUsed(), r.allPoolsReserved);
        EXPECT_GT(r.outsideLedger(), 0u) << "the CUDA context alone uses device memory";
    }
    const CudaMemoryReport after = dev.measure(); // synchronized: the async frees have run
    EXPECT_EQ(after.ledgerLive, 0u);
    EXPECT_EQ(after.ledgerPeak, 2'000'123u);
    EXPECT_EQ(after.poolUsed, 0u);
    EXPECT_GE(after.poolUsedHigh, 2'000'123u);
    EXPECT_GE(after.poolReserved, 2'000'123u) << "the pool keeps what it reserved";
    dev.resetPoolPeaks();
    EXPECT_EQ(dev.measure().poolUsedHigh, 0u);
}

TEST_F(gpuDeviceMem, ZeroedBuffersAreZeroEvenWhenThePoolReusesMemory) {
    Ledger ledger;
    CudaDevice dev(ledger, 0);
    {
        Buffer dirty = dev.allocateArray<float>(4096, {});
        CUDA_CHECK(cudaMemsetAsync(dirty.data(), 0xff, 4096 * 4, dev.stream()));
    }
    Buffer clean = dev.allocateArray<float>(4096, {}, true);
    std::vector<float> host(4096, 1.0f);
    CUDA_CHECK(
        cudaMemcpyAsync(host.data(), clean.data(), 4096 * 4, cudaMemcpyDeviceToHost, dev.stream()));
    dev.synchronize();
    for (float v : host)
        ASSERT_EQ(v, 0.0f);
}

TEST_F(gpuDeviceMem, RanksSharingAGpuHaveTheirOwnPools) {
    Ledger l0(0), l1(1);
    CudaDevice d0(l0, 0), d1(l1, 0);
    EXPECT_NE(d0.stream(), d1.stream());
    Buffer a = d0.allocate(8 << 20, {Category::MasterFp32, Tier::Device, 0});
    const CudaMemoryReport r0 = d0.measure(), r1 = d1.measure();
    EXPECT_GE(r0.poolUsed, 8u << 20);
    EXPECT_EQ(r1.poolUsed, 0u) << "rank 1's pool saw rank 0's allocation";
    EXPECT_EQ(r0.allPoolsReserved, r1.allPoolsReserved) << "both count every pool on the GPU";
    EXPECT_GE(r1.allPoolsReserved, r0.poolReserved + r1.poolReserved);
}

TEST_F(gpuDeviceMem, ARefusedAllocationIsOutOfMemoryAndLeavesTheLedgerAlone) {
    Ledger ledger;
    CudaDevice dev(ledger, 0);
    const CudaMemoryReport r = dev.measure();
    try {
        Buffer huge = dev.allocate(r.deviceTotal * 2, {Category::Activation, Tier::Device, 3});
        FAIL() << "allocated twice the GPU's memory";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::OutOfMemory) << e.what();
        EXPECT_NE(std::string(e.what()).find("refused"), std::string::npos) << e.what();
    }
    EXPECT_EQ(ledger.liveBytes(), 0u);
    Buffer fine = dev.allocate(1024, {}); // the error was cleared: the device still works
    dev.synchronize();
    EXPECT_EQ(ledger.liveBytes(), 1024u);
}

} // namespace
} // namespace shardscope::device
