// The shared-device communicator's rendezvous (comm/shared_device_communicator.h) on CPU memory:
// N rank threads in one process. The CUDA backend runs the same template with device copies and
// kernels, so this is the coverage its protocol gets on a machine without a GPU: results in rank
// order, bitwise equal to comm::sumInRankOrder; a mismatched call, a missing rank and a rank that
// left are errors naming the rank, within the deadline, never hangs.
#include "comm/shared_device_communicator.h"
#include "core/error.h"
#include "core/ledger.h"
#include "device/cpu_device.h"
#include "device/device.h"
#include "kernels/cpu/bf16.h"

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <gtest/gtest.h>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace shardscope::comm {
namespace {

using Comms = std::vector<std::unique_ptr<Communicator>>;
using Body = std::function<void(int rank, Communicator& comm)>;

Comms makeGroup(int n) {
    return makeSharedHostCommunicators(
        std::vector<device::Device*>(static_cast<std::size_t>(n), nullptr));
}

// Runs body on one thread per rank; returns each rank's error text ("" = no error). A rank's
// communicator is destroyed on its own thread when the body ends, as in a real rank thread.
std::vector<std::string> runRanks(Comms& comms, const Body& body) {
    std::vector<std::string> errors(comms.size());
    std::vector<std::thread> threads;
    for (std::size_t r = 0; r < comms.size(); ++r) {
        threads.emplace_back([&, r] {
            try {
                body(static_cast<int>(r), *comms[r]);
            } catch (const std::exception& e) {
                errors[r] = e.what();
            }
            comms[r].reset();
        });
    }
    for (auto& t : threads)
        t.join();
    return errors;
}

void expectNoErrors(const std::vector<std::string>& errors) {
    for (std::size_t r = 0; r < errors.size(); ++r)
        EXPECT_EQ(errors[r], "") << "rank " << r;
}

// Values whose sum depends on the order of addition (wide exponent range, mixed signs).
std::vector<float> adversarial(std::size_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> mant(-1.0f, 1.0f);
    std::uniform_int_distribution<int> exp(-12, 12);
    std::vector<float> v(n);
    for (float& x : v)
        x = std::ldexp(mant(rng), exp(rng));
    return v;
}

std::uint32_t bits(float f) {
    std::uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}

class SharedHost : public ::testing::TestWithParam<int> {};

TEST_P(SharedHost, AllGatherPlacesShardsInRankOrderAlsoInPlace) {
    const int n = GetParam();
    const std::size_t count = 7;
    for (bool inPlace : {false, true}) {
        Comms comms = makeGroup(n);
        std::vector<std::vector<float>> fulls(static_cast<std::size_t>(n));
        expectNoErrors(runRanks(comms, [&](int r, Communicator& c) {
            std::vector<float> shard(count), full(count * static_cast<std::size_t>(n), -1.0f);
            for (std::size_t i = 0; i < count; ++i)
                shard[i] = static_cast<float>(r * 100 + static_cast<int>(i));
            float* mine = full.data() + static_cast<std::size_t>(r) * count;
            if (inPlace) std::memcpy(mine, shard.data(), count * 4);
            c.allGather(inPlace ? mine : shard.data(), full.data(), count, DType::F32, 3);
            fulls[static_cast<std::size_t>(r)] = full;
        }));
        for (int r = 0; r < n; ++r)
            for (int q = 0; q < n; ++q)
                for (std::size_t i = 0; i < count; ++i)
                    ASSERT_EQ(
                        fulls[static_cast<std::size_t>(r)][static_cast<std::size_t>(q) * count + i],
                        static_cast<float>(q * 100 + static_cast<int>(i)))
                        << "rank " << r << " shard " << q << " in place " << inPlace;
    }
}

TEST_P(SharedHost, ReduceScatterAndAllReduceSumInRankOrderBitwise) {
    const int n = GetParam();
    for (std::size_t count : {std::size_t{1}, std::size_t{2}, std::size_t{13}}) {
        std::vector<std::vector<float>> inputs; // rank r's full buffer (count · n)
        for (int r = 0; r < n; ++r)
            inputs.push_back(
                adversarial(count * static_cast<std::size_t>(n), 17u + static_cast<unsigned>(r)));
        // Expected: every element summed over ranks in rank order (the shared reference).
        std::vector<float> expected(count * static_cast<std::size_t>(n));
        std::vector<const void*> parts;
        for (auto& in : inputs)
            parts.push_back(in.data());
        sumInRankOrder(parts.data(), n, expected.data(), expected.size(), DType::F32);

        Comms comms = makeGroup(n);
        std::vector<std::vector<float>> shards(static_cast<std::size_t>(n)),
            reduced(static_cast<std::size_t>(n));
        expectNoErrors(runRanks(comms, [&](int r, Communicator& c) {
            const auto me = static_cast<std::size_t>(r);
            std::vector<float> shard(count);
            c.reduceScatter(inputs[me].data(), shard.data(), count, DType::F32, 0);
            std::vector<float> data = inputs[me]; // all-reduce of the same buffers, in place
            c.allReduce(data.data(), data.size(), DType::F32, 0);
            shards[me] = shard;
            reduced[me] = data;
        }));
        for (std::size_t r = 0; r < static_cast<std::size_t>(n); ++r) {
            for (std::size_t i = 0; i < count; ++i)
                ASSERT_EQ(bits(shards[r][i]), bits(expected[r * count + i]))
                    << "reduce-scatter rank " << r << " i " << i;
            for (std::size_t i = 0; i < expected.size(); ++i)
                ASSERT_EQ(bits(reduced[r][i]), bits(expected[i]))
                    << "all-reduce rank " << r << " i " << i << " count " << count;
        }
    }
}

// The prefetch pattern: an all-gather started, a reduce-scatter and an all-reduce called while it
// is outstanding, then the all-gather finished — every result as if each ran alone.
TEST_P(SharedHost, StartedAllGatherWithCollectivesInsideIt) {
    const int n = GetParam();
    const std::size_t count = 5;
    std::vector<std::vector<float>> inputs;
    for (int r = 0; r < n; ++r)
        inputs.push_back(
            adversarial(count * static_cast<std::size_t>(n), 40u + static_cast<unsigned>(r)));
    std::vector<float> expected(count * static_cast<std::size_t>(n));
    std::vector<const void*> parts;
    for (auto& in : inputs)
        parts.push_back(in.data());
    sumInRankOrder(parts.data(), n, expected.data(), expected.size(), DType::F32);

    Comms comms = makeGroup(n);
    std::vector<std::vector<float>> gathered(static_cast<std::size_t>(n)), shards(gathered),
        reduced(gathered);
    expectNoErrors(runRanks(comms, [&](int r, Communicator& c) {
        const auto me = static_cast<std::size_t>(r);
        const std::vector<float> mine(count, static_cast<float>(r) + 0.5f);
        std::vector<float> full(count * static_cast<std::size_t>(n), -1.0f);
        const std::uint64_t ticket =
            c.startAllGather(mine.data(), full.data(), count, DType::F32, 3);
        EXPECT_TRUE(c.hasStarted());
        EXPECT_THROW(c.startAllGather(mine.data(), full.data(), count, DType::F32, 4), Error)
            << "one started all-gather at a time";
        std::vector<float> shard(count);
        c.reduceScatter(inputs[me].data(), shard.data(), count, DType::F32, 2);
        std::vector<float> data = inputs[me];
        c.allReduce(data.data(), data.size(), DType::F32, 2);
        c.finishAllGather(ticket);
        EXPECT_FALSE(c.hasStarted());
        EXPECT_EQ(c.stats().calls[static_cast<std::size_t>(CollectiveOp::AllGather)], 1u);
        gathered[me] = full;
        shards[me] = shard;
        reduced[me] = data;
    }));
    for (std::size_t r = 0; r < static_cast<std::size_t>(n); ++r) {
        for (std::size_t q = 0; q < static_cast<std::size_t>(n); ++q)
            for (std::size_t i = 0; i < count; ++i)
                ASSERT_EQ(gathered[r][q * count + i], static_cast<float>(q) + 0.5f)
                    << "rank " << r << " shard " << q;
        for (std::size_t i = 0; i < count; ++i)
            ASSERT_EQ(bits(shards[r][i]), bits(expected[r * count + i]))
                << "reduce-scatter rank " << r;
        for (std::size_t i = 0; i < expected.size(); ++i)
            ASSERT_EQ(bits(reduced[r][i]), bits(expected[i])) << "all-reduce rank " << r;
    }
}

TEST_P(SharedHost, Bf16SumsRoundOnceLikeTheReference) {
    const int n = GetParam();
    const std::size_t count = 9;
    std::vector<std::vector<kernels::Bf16>> inputs;
    for (int r = 0; r < n; ++r) {
        std::vector<float> f =
            adversarial(count * static_cast<std::size_t>(n), 99u + static_cast<unsigned>(r));
        std::vector<kernels::Bf16> b(f.size());
        kernels::toBf16(f, b);
        inputs.push_back(b);
    }
    std::vector<kernels::Bf16> expected(count * static_cast<std::size_t>(n));
    std::vector<const void*> parts;
    for (auto& in : inputs)
        parts.push_back(in.data());
    sumInRankOrder(parts.data(), n, expected.data(), expected.size(), DType::Bf16);

    Comms comms = makeGroup(n);
    std::vector<std::vector<kernels::Bf16>> reduced(static_cast<std::size_t>(n));
    expectNoErrors(runRanks(comms, [&](int r, Communicator& c) {
        std::vector<kernels::Bf16> data = inputs[static_cast<std::size_t>(r)];
        c.allReduce(data.data(), data.size(), DType::Bf16, 0);
        reduced[static_cast<std::size_t>(r)] = data;
    }));
    for (auto& got : reduced)
        EXPECT_EQ(got, expected);
}

TEST_P(SharedHost, BroadcastScalarsAndGatherBytes) {
    const int n = GetParam();
    const int root = n - 1;
    Comms comms = makeGroup(n);
    std::vector<std::string> got(static_cast<std::size_t>(n));
    std::vector<double> sums(static_cast<std::size_t>(n)), maxes(static_cast<std::size_t>(n));
    std::vector<std::vector<std::string>> gathered(static_cast<std::size_t>(n));
    expectNoErrors(runRanks(comms, [&](int r, Communicator& c) {
        std::string text = r == root ? "from the root" : std::string(13, '?');
        c.broadcast(text.data(), text.size(), root);
        got[static_cast<std::size_t>(r)] = text;
        sums[static_cast<std::size_t>(r)] = c.sumScalar(0.1 * (r + 1));
        maxes[static_cast<std::size_t>(r)] = c.maxScalar(r == 0 ? 7.5 : -1.0 * r);
        c.barrier();
        gathered[static_cast<std::size_t>(r)] =
            c.gatherBytes(std::string(static_cast<std::size_t>(r), 'x'), 0);
    }));
    double expectedSum = 0.0;
    for (int r = 0; r < n; ++r)
        expectedSum += 0.1 * (r + 1); // rank order, as the group sums
    for (int r = 0; r < n; ++r) {
        const auto me = static_cast<std::size_t>(r);
        EXPECT_EQ(got[me], "from the root") << "rank " << r;
        EXPECT_EQ(sums[me], expectedSum) << "bitwise, every rank";
        EXPECT_EQ(maxes[me], 7.5);
        if (r == 0) {
            ASSERT_EQ(gathered[me].size(), static_cast<std::size_t>(n));
            for (int q = 0; q < n; ++q)
                EXPECT_EQ(gathered[me][static_cast<std::size_t>(q)],
                          std::string(static_cast<std::size_t>(q), 'x'));
        } else {
            EXPECT_TRUE(gathered[me].empty());
        }
    }
}

INSTANTIATE_TEST_SUITE_P(commShared, SharedHost, ::testing::Values(1, 2, 3, 5));

TEST(commShared, ScratchIsCommBufferInEachRanksLedgerAndCallsAreTraced) {
    const int n = 3;
    std::vector<Ledger> ledgers;
    for (int r = 0; r < n; ++r)
        ledgers.emplace_back(r);
    std::vector<std::unique_ptr<device::CpuDevice>> cpus;
    std::vector<device::Device*> devices;
    std::vector<std::vector<Event>> events(n);
    for (int r = 0; r < n; ++r) {
        ledgers[static_cast<std::size_t>(r)].setSink(
            [&events, r](const Event& e) { events[static_cast<std::size_t>(r)].push_back(e); });
        cpus.push_back(std::make_unique<device::CpuDevice>(ledgers[static_cast<std::size_t>(r)]));
        devices.push_back(cpus.back().get());
    }
    Comms comms = makeSharedHostCommunicators(devices);
    std::vector<CommStats> stats(n);
    expectNoErrors(runRanks(comms, [&](int r, Communicator& c) {
        std::vector<float> data(10, 1.0f);
        c.allReduce(data.data(), data.size(), DType::F32, 4);
        ASSERT_EQ(data[9], 3.0f);
        stats[static_cast<std::size_t>(r)] = c.stats();
    }));
    for (int r = 0; r < n; ++r) {
        const auto me = static_cast<std::size_t>(r);
        // chunk = ceil(10 / 3) = 4 floats of scratch per rank, freed when the call returns.
        EXPECT_EQ(ledgers[me].peak().at(Category::CommBuffer, Tier::Device), 16u);
        EXPECT_EQ(ledgers[me].liveBytes(), 0u);
        const auto ar = static_cast<std::size_t>(CollectiveOp::AllReduce);
        EXPECT_EQ(stats[me].calls[ar], 1u);
        EXPECT_EQ(stats[me].payloadBytes[ar], 40u);
        int begins = 0, ends = 0;
        for (const Event& e : events[me]) {
            if (e.kind == EventKind::CollectiveBegin && e.collective == CollectiveOp::AllReduce &&
                e.unit == 4 && e.peers == n)
                ++begins;
            if (e.kind == EventKind::CollectiveEnd && e.collective == CollectiveOp::AllReduce)
                ++ends;
        }
        EXPECT_EQ(begins, 1);
        EXPECT_EQ(ends, 1);
    }
}

TEST(commShared, MismatchedCollectivesFailOnEveryRank) {
    Comms comms = makeGroup(2);
    const auto errors = runRanks(comms, [](int r, Communicator& c) {
        std::vector<float> a(8), b(8);
        if (r == 0)
            c.allGather(a.data(), b.data(), 4, DType::F32, 0);
        else
            c.reduceScatter(b.data(), a.data(), 4, DType::F32, 0);
    });
    for (const std::string& e : errors)
        EXPECT_NE(e.find("collective mismatch"), std::string::npos) << e;
}

TEST(commShared, AMissingRankIsNamedWithinTheDeadline) {
    Comms comms = makeGroup(3);
    const auto t0 = std::chrono::steady_clock::now();
    std::atomic<bool> othersDone{false};
    const auto errors = runRanks(comms, [&](int r, Communicator& c) {
        c.setTimeout(std::chrono::milliseconds(300));
        if (r == 2) { // alive, but never calls the collective: stays until the others gave up
            while (!othersDone.load())
                std::this_thread::sleep_for(std::chrono::milliseconds(5));
            return;
        }
        std::vector<float> v(4, 1.0f);
        try {
            c.allReduce(v.data(), v.size(), DType::F32, 0);
        } catch (...) {
            if (r == 0) othersDone = true; // rank 1 fails at the same moment (broken barrier)
            throw;
        }
    });
    const auto elapsed = std::chrono::steady_clock::now() - t0;
    EXPECT_LT(elapsed, std::chrono::seconds(5));
    for (int r : {0, 1}) {
        EXPECT_NE(errors[static_cast<std::size_t>(r)].find("waiting for rank(s) 2"),
                  std::string::npos)
            << errors[static_cast<std::size_t>(r)];
        EXPECT_NE(errors[static_cast<std::size_t>(r)].find("all-reduce"), std::string::npos);
    }
    EXPECT_EQ(errors[2], "");
}

TEST(commShared, ARankThatDiedBreaksTheGroupAtOnce) {
    Comms comms = makeGroup(3);
    const auto t0 = std::chrono::steady_clock::now();
    const auto errors = runRanks(comms, [](int r, Communicator& c) {
        c.setTimeout(std::chrono::seconds(60)); // far beyond the test's limit: must not be needed
        if (r == 1) throw Error(ErrorKind::Internal, "rank 1 crashed");
        std::vector<float> shard(2, 1.0f), full(6);
        c.allGather(shard.data(), full.data(), 2, DType::F32, 0);
        c.allGather(shard.data(), full.data(), 2, DType::F32, 0); // a broken group stays broken
    });
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
    EXPECT_EQ(errors[1], "rank 1 crashed");
    for (int r : {0, 2})
        EXPECT_NE(errors[static_cast<std::size_t>(r)].find("rank 1"), std::string::npos)
            << errors[static_cast<std::size_t>(r)];
}

// ---- point-to-point (pipeline parallelism) -----------------------------------------------------

TEST(commSharedP2P, MessagesArriveInOrderAndSendsCompleteWhenReceived) {
    Comms comms = makeGroup(3);
    std::vector<std::vector<float>> got(3);
    const auto errors = runRanks(comms, [&](int r, Communicator& c) {
        if (r == 0) { // two messages to rank 1, one to rank 2, posted before anyone receives
            std::vector<float> a(5, 1.5f), b(5, -2.0f), x(3, 7.0f);
            const std::uint64_t ta = c.send(a.data(), a.size(), DType::F32, 1, 0);
            const std::uint64_t tb = c.send(b.data(), b.size(), DType::F32, 1, 0);
            const std::uint64_t tx = c.send(x.data(), x.size(), DType::F32, 2, 0);
            c.waitSend(ta);
            c.waitSend(tb);
            c.waitSend(tx);
            return;
        }
        const std::size_t count = r == 1 ? 5 : 3;
        std::vector<float> in(count);
        for (int k = 0; k < (r == 1 ? 2 : 1); ++k) {
            c.recv(in.data(), count, DType::F32, 0, 0);
            got[static_cast<std::size_t>(r)].insert(got[static_cast<std::size_t>(r)].end(),
                                                    in.begin(), in.end());
        }
    });
    expectNoErrors(errors);
    EXPECT_EQ(got[1], (std::vector<float>{1.5f, 1.5f, 1.5f, 1.5f, 1.5f, -2.0f, -2.0f, -2.0f, -2.0f,
                                          -2.0f}));
    EXPECT_EQ(got[2], (std::vector<float>(3, 7.0f)));
}

TEST(commSharedP2P, SendsAndReceivesAreTracedAndCounted) {
    Ledger l0(0), l1(1);
    device::CpuDevice d0(l0), d1(l1);
    Comms comms = makeSharedHostCommunicators({&d0, &d1});
    std::vector<Event> e0, e1;
    l0.setSink([&](const Event& e) { e0.push_back(e); });
    l1.setSink([&](const Event& e) { e1.push_back(e); });
    CommStats s0, s1;
    const auto errors = runRanks(comms, [&](int r, Communicator& c) {
        std::vector<Bf16> v(6);
        if (r == 0)
            c.waitSend(c.send(v.data(), v.size(), DType::Bf16, 1, 3));
        else
            c.recv(v.data(), v.size(), DType::Bf16, 0, 3);
        (r == 0 ? s0 : s1) = c.stats();
    });
    expectNoErrors(errors);
    const auto send = static_cast<std::size_t>(CollectiveOp::PipeSend);
    const auto recv = static_cast<std::size_t>(CollectiveOp::PipeRecv);
    EXPECT_EQ(s0.calls[send], 1u);
    EXPECT_EQ(s0.sentBytes[send], 12u);
    EXPECT_EQ(s1.calls[recv], 1u);
    EXPECT_EQ(s1.payloadBytes[recv], 12u);
    EXPECT_EQ(s1.sentBytes[recv], 0u);
    ASSERT_EQ(e0.size(), 2u);
    EXPECT_EQ(e0[0].collective, CollectiveOp::PipeSend);
    EXPECT_EQ(e0[0].unit, 3);
    ASSERT_EQ(e1.size(), 2u);
    EXPECT_EQ(e1[1].kind, EventKind::CollectiveEnd);
    EXPECT_EQ(e1[1].collective, CollectiveOp::PipeRecv);
    EXPECT_EQ(e1[1].bytes, 12u);
}

TEST(commSharedP2P, ASilentSenderIsNamedWithinTheDeadline) {
    Comms comms = makeGroup(3);
    std::atomic<bool> done{false};
    const auto t0 = std::chrono::steady_clock::now();
    const auto errors = runRanks(comms, [&](int r, Communicator& c) {
        c.setTimeout(std::chrono::milliseconds(300));
        if (r != 2) { // alive, sending nothing, until rank 2 gave up
            while (!done.load())
                std::this_thread::sleep_for(std::chrono::milliseconds(5));
            return;
        }
        std::vector<float> v(4);
        try {
            c.recv(v.data(), v.size(), DType::F32, 1, 0);
        } catch (...) {
            done = true;
            throw;
        }
    });
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
    EXPECT_NE(errors[2].find("pipeline receive timed out"), std::string::npos) << errors[2];
    EXPECT_NE(errors[2].find("waiting for rank(s) 1"), std::string::npos) << errors[2];
}

TEST(commSharedP2P, APeerThatLeftFailsItsReceiverAtOnceAndSizesMustAgree) {
    Comms comms = makeGroup(2);
    const auto t0 = std::chrono::steady_clock::now();
    const auto errors = runRanks(comms, [](int r, Communicator& c) {
        c.setTimeout(std::chrono::seconds(60)); // must not be needed
        if (r == 0) throw Error(ErrorKind::Internal, "rank 0 crashed");
        std::vector<float> v(4);
        c.recv(v.data(), v.size(), DType::F32, 0, 0);
    });
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
    EXPECT_NE(errors[1].find("rank 0 has left the group"), std::string::npos) << errors[1];

    // A receive of another size than the send is an error on the receiver, and its sender's
    // wait ends (the message is refused, never read).
    Comms sized = makeGroup(2);
    const auto mismatch = runRanks(sized, [](int r, Communicator& c) {
        c.setTimeout(std::chrono::seconds(60));
        std::vector<float> v(8);
        if (r == 0)
            c.waitSend(c.send(v.data(), 8, DType::F32, 1, 0));
        else
            c.recv(v.data(), 4, DType::F32, 0, 0);
    });
    EXPECT_NE(
        mismatch[1].find("pipeline receive of 16 bytes got a message of 32 bytes from rank 0"),
        std::string::npos)
        << mismatch[1];
    EXPECT_EQ(mismatch[0], "");
}

TEST(commSharedP2P, APeerOutsideTheGroupOrItselfIsRefused) {
    Comms comms = makeGroup(2);
    std::vector<float> v(2);
    EXPECT_THROW(comms[0]->send(v.data(), 2, DType::F32, 0, 0), Error);
    EXPECT_THROW(comms[0]->recv(v.data(), 2, DType::F32, 2, 0), Error);
    EXPECT_THROW(comms[0]->send(v.data(), 2, DType::F32, -1, 0), Error);
    EXPECT_THROW(makeSelfCommunicator(nullptr)->send(v.data(), 2, DType::F32, 0, 0), Error);
}

} // namespace
} // namespace shardscope::comm
