// The GPU communicators on real devices:
//  - shared-device (N rank threads on GPU 0, each with its own CudaDevice): the same results as
//    the host reference bit for bit, scratch in each rank's ledger, a missing rank named;
//  - NCCL with one rank (bootstrapped over the self communicator: runs on any single GPU) and,
//    with two or more GPUs, one rank per GPU as threads bootstrapped over the shared-host group:
//    deterministic sums bitwise the reference, and a stalled peer an error within the deadline.
// All skip without a CUDA device.
#include "comm/shared_device_communicator.h"
#include "core/ledger.h"
#include "device/cuda_device.h"
#include "gpu_test_support.h"
#include "kernels/cpu/bf16.h"

#include <atomic>
#include <chrono>
#include <functional>
#include <gtest/gtest.h>
#include <thread>
#include <vector>
#ifdef SHARDSCOPE_HAVE_NCCL
#include "comm/nccl_communicator.h"
#endif

namespace shardscope::comm {
namespace {

using gputest::bitDifferences;
using gputest::DeviceArray;
using gputest::randomFloats;

// Per rank r: full buffer input (count·n floats), seed-distinct.
std::vector<float> rankInput(int r, std::size_t elems) {
    auto v = randomFloats(elems, 200u + static_cast<unsigned>(r), 100.0f);
    v[0] = (r % 2) ? 3e7f : -3e7f; // makes the order of summation visible in the bits
    return v;
}

std::vector<float> referenceSum(int n, std::size_t elems) {
    std::vector<std::vector<float>> in;
    std::vector<const void*> parts;
    for (int r = 0; r < n; ++r)
        in.push_back(rankInput(r, elems));
    for (auto& v : in)
        parts.push_back(v.data());
    std::vector<float> out(elems);
    sumInRankOrder(parts.data(), n, out.data(), elems, DType::F32);
    return out;
}

// Runs body(rank) on n threads; returns each rank's error ("" = none).
std::vector<std::string> onThreads(int n, const std::function<void(int)>& body) {
    std::vector<std::string> errors(static_cast<std::size_t>(n));
    std::vector<std::thread> threads;
    for (int r = 0; r < n; ++r)
        threads.emplace_back([&, r] {
            try {
                body(r);
            } catch (const std::exception& e) {
                errors[static_cast<std::size_t>(r)] = e.what();
            }
        });
    for (auto& t : threads)
        t.join();
    return errors;
}

std::vector<float> download(const device::Buffer& b, device::CudaDevice& dev) {
    std::vector<float> host(b.bytes() / 4);
    CUDA_CHECK(
        cudaMemcpyAsync(host.data(), b.data(), b.bytes(), cudaMemcpyDeviceToHost, dev.stream()));
    dev.synchronize();
    return host;
}
void upload(device::Buffer& b, const std::vector<float>& host, device::CudaDevice& dev) {
    CUDA_CHECK(cudaMemcpyAsync(b.data(), host.data(), host.size() * 4, cudaMemcpyHostToDevice,
                               dev.stream()));
    dev.synchronize();
}

// One rank's collectives: all-gather, reduce-scatter, all-reduce of rankInput; results kept.
struct RankResults {
    std::vector<float> gathered, shard, reduced;
    std::uint64_t commPeak = 0;
};

RankResults exercise(int r, int n, std::size_t count, Communicator& c, device::CudaDevice& dev) {
    const std::size_t full = count * static_cast<std::size_t>(n);
    device::Buffer in = dev.allocateArray<float>(full, {Category::GradFull, Tier::Device, 0});
    device::Buffer shard = dev.allocateArray<float>(count, {Category::GradShard, Tier::Device, 0});
    device::Buffer gathered =
        dev.allocateArray<float>(full, {Category::ParamFull, Tier::Device, 0});
    upload(in, rankInput(r, full), dev);
    c.reduceScatter(in.data(), shard.data(), count, DType::F32, 0);
    c.allGather(shard.data(), gathered.data(), count, DType::F32, 0);
    c.allReduce(in.data(), full, DType::F32, 0);
    RankResults out{download(gathered, dev), download(shard, dev), download(in, dev), 0};
    out.commPeak = dev.ledger().peak().at(Category::CommBuffer, Tier::Device);
    return out;
}

TEST(gpuComm, SharedDeviceRanksMatchTheReferenceBitwise) {
    SHARDSCOPE_REQUIRE_CUDA();
    const int n = 3;
    const std::size_t count = 1001;
    std::vector<Ledger> ledgers;
    for (int r = 0; r < n; ++r)
        ledgers.emplace_back(r);
    std::vector<std::unique_ptr<device::CudaDevice>> devs(n);
    for (int r = 0; r < n; ++r)
        devs[static_cast<std::size_t>(r)] =
            std::make_unique<device::CudaDevice>(ledgers[static_cast<std::size_t>(r)], 0);
    std::vector<device::CudaDevice*> raw;
    for (auto& d : devs)
        raw.push_back(d.get());
    auto comms = makeSharedDeviceCommunicators(raw);
    EXPECT_EQ(comms[0]->name(), "shared-device");
    std::vector<RankResults> results(n);
    const auto errors = onThreads(n, [&](int r) {
        const auto me = static_cast<std::size_t>(r);
        CUDA_CHECK(cudaSetDevice(0));
        results[me] = exercise(r, n, count, *comms[me], *devs[me]);
        comms[me].reset();
    });
    for (const auto& e : errors)
        EXPECT_EQ(e, "");
    const auto expected = referenceSum(n, count * n);
    for (std::size_t r = 0; r < static_cast<std::size_t>(n); ++r) {
        EXPECT_EQ(bitDifferences(results[r].reduced, expected), 0u) << "all-reduce rank " << r;
        EXPECT_EQ(bitDifferences(results[r].gathered, expected), 0u)
            << "reduce-scatter + all-gather rank " << r;
        EXPECT_EQ(results[r].commPeak, (count * n + n - 1) / n * 4)
            << "all-reduce scratch: one chunk";
    }
}

TEST(gpuComm, SharedDeviceNamesAMissingRank) {
    SHARDSCOPE_REQUIRE_CUDA();
    Ledger l0(0), l1(1);
    device::CudaDevice d0(l0, 0), d1(l1, 0);
    auto comms = makeSharedDeviceCommunicators({&d0, &d1});
    std::atomic<bool> done{false};
    const auto errors = onThreads(2, [&](int r) {
        if (r == 1) {
            while (!done)
                std::this_thread::sleep_for(std::chrono::milliseconds(5));
            return;
        }
        comms[0]->setTimeout(std::chrono::milliseconds(300));
        device::Buffer b = d0.allocateArray<float>(8, {});
        try {
            comms[0]->allReduce(b.data(), 8, DType::F32, 0);
        } catch (...) {
            done = true;
            throw;
        }
    });
    EXPECT_NE(errors[0].find("waiting for rank(s) 1"), std::string::npos) << errors[0];
}

#ifdef SHARDSCOPE_HAVE_NCCL

TEST(gpuComm, NcclSingleRankRunsEveryCollective) {
    SHARDSCOPE_REQUIRE_CUDA();
    Ledger ledger;
    device::CudaDevice dev(ledger, 0);
    auto nccl = makeNcclCommunicator(dev, makeSelfCommunicator(nullptr));
    EXPECT_EQ(nccl->name(), "nccl");
    EXPECT_EQ(nccl->size(), 1);
    for (bool det : {false, true}) {
        nccl->setDeterministic(det);
        const RankResults res = exercise(0, 1, 777, *nccl, dev);
        const auto expected = rankInput(0, 777);
        EXPECT_EQ(bitDifferences(res.reduced, expected), 0u) << "deterministic " << det;
        EXPECT_EQ(bitDifferences(res.gathered, expected), 0u);
    }
    EXPECT_EQ(nccl->sumScalar(2.5), 2.5);
    device::Buffer bytes = dev.allocate(64, {});
    nccl->broadcast(bytes.data(), 64, 0);
    const auto& st = nccl->stats();
    EXPECT_EQ(st.calls[static_cast<std::size_t>(CollectiveOp::AllReduce)], 2u);
    EXPECT_EQ(st.calls[static_cast<std::size_t>(CollectiveOp::Broadcast)], 1u);
}

TEST(gpuComm, NcclOneRankPerGpuSumsLikeTheReference) {
    SHARDSCOPE_REQUIRE_CUDA_DEVICES(2);
    const int n = std::min(gputest::cuda().deviceCount, 4);
    const std::size_t count = 4099;
    auto hosts = makeSharedHostCommunicators(
        std::vector<device::Device*>(static_cast<std::size_t>(n), nullptr));
    std::vector<RankResults> results(static_cast<std::size_t>(n));
    const auto errors = onThreads(n, [&](int r) {
        const auto me = static_cast<std::size_t>(r);
        const int gpu = localCudaDevice(*hosts[me], gputest::cuda().deviceCount);
        EXPECT_EQ(gpu, r) << "one host: local rank = rank";
        Ledger ledger(r);
        device::CudaDevice dev(ledger, gpu);
        auto nccl = makeNcclCommunicator(dev, std::move(hosts[me]));
        nccl->setDeterministic(true);
        results[me] = exercise(r, n, count, *nccl, dev);
    });
    for (const auto& e : errors)
        EXPECT_EQ(e, "");
    const auto expected = referenceSum(n, count * static_cast<std::size_t>(n));
    for (std::size_t r = 0; r < static_cast<std::size_t>(n); ++r) {
        EXPECT_EQ(bitDifferences(results[r].reduced, expected), 0u)
            << "deterministic all-reduce rank " << r;
        EXPECT_EQ(bitDifferences(results[r].gathered, expected), 0u)
            << "deterministic reduce-scatter rank " << r;
    }
}

TEST(gpuComm, NcclStalledPeerIsAnErrorWithinTheDeadline) {
    SHARDSCOPE_REQUIRE_CUDA_DEVICES(2);
    auto hosts = makeSharedHostCommunicators({nullptr, nullptr});
    std::atomic<bool> rank0Done{false};
    const auto t0 = std::chrono::steady_clock::now();
    const auto errors = onThreads(2, [&](int r) {
        const auto me = static_cast<std::size_t>(r);
        Ledger ledger(r);
        device::CudaDevice dev(ledger, r);
        auto nccl = makeNcclCommunicator(dev, std::move(hosts[me]));
        nccl->setTimeout(std::chrono::seconds(2));
        if (r == 1) { // alive but never joins the all-reduce
            while (!rank0Done)
                std::this_thread::sleep_for(std::chrono::milliseconds(10));
            return; // its finalize has the deadline too
        }
        device::Buffer b = dev.allocateArray<float>(1 << 20, {});
        try {
            nccl->allReduce(b.data(), 1 << 20, DType::F32, 0);
        } catch (...) {
            rank0Done = true;
            throw;
        }
        rank0Done = true;
    });
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(30));
    EXPECT_NE(errors[0].find("all-reduce on rank 0"), std::string::npos) << errors[0];
    EXPECT_NE(errors[0].find("timed out"), std::string::npos) << errors[0];
    EXPECT_NE(errors[0].find("aborted"), std::string::npos) << errors[0];
}

#endif // SHARDSCOPE_HAVE_NCCL

} // namespace
} // namespace shardscope::comm
