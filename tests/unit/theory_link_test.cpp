// The α-β link estimate shown beside the exposed communication: what the bytes of a run's
// collectives would cost on NVLink, from the report's per-rank sent bytes and calls.
#include "plan/collective.h"
#include "theory/link.h"

#include <gtest/gtest.h>

namespace shardscope::theory {
namespace {

TEST(theoryLink, ARingCollectivePaysItsStepsLatencyAndItsSentBytesAtBusbw) {
    const LinkModel link{"test", 5.0, 1.0, 100.0};
    // 8 all-gathers over 4 ranks, 3 MB sent by each rank in all: 8 × (5 + 3 × 1) µs, 3e6/1e11 s.
    const LinkEstimate ag = estimateCollectives(link, CollectiveOp::AllGather, 3e6, 8, 4);
    EXPECT_DOUBLE_EQ(ag.latencySeconds, 8 * 8e-6);
    EXPECT_DOUBLE_EQ(ag.bandwidthSeconds, 3e-5);
    EXPECT_DOUBLE_EQ(ag.seconds(), 8 * 8e-6 + 3e-5);
    // An all-reduce goes round the ring twice: 2(G−1) steps of latency.
    EXPECT_DOUBLE_EQ(estimateCollectives(link, CollectiveOp::AllReduce, 0, 1, 4).latencySeconds,
                     (5 + 6) * 1e-6);
    EXPECT_DOUBLE_EQ(estimateCollectives(link, CollectiveOp::TpAllReduce, 0, 1, 2).latencySeconds,
                     (5 + 2) * 1e-6);
    EXPECT_DOUBLE_EQ(estimateCollectives(link, CollectiveOp::Broadcast, 0, 1, 4).latencySeconds,
                     (5 + 3) * 1e-6);
}

TEST(theoryLink, TheBandwidthTermIsNcclTestsBusbwDefinition) {
    // A large all-reduce of payload S over N ranks: each sends 2(N−1)/N·S; at busbw B it takes
    // algbw = S / t with busbw = algbw · 2(N−1)/N = B, so t = 2(N−1)/N·S / B.
    const int n = 8;
    const std::uint64_t payload = 1ull << 30;
    const double sent = static_cast<double>(plan::sentBytes(CollectiveOp::AllReduce, payload, n));
    const LinkEstimate e = estimateCollectives(kNvlinkH100, CollectiveOp::AllReduce, sent, 1, n);
    const double busbw =
        plan::busBandwidth(CollectiveOp::AllReduce, payload, e.bandwidthSeconds, n);
    EXPECT_NEAR(busbw, kNvlinkH100.busGBs * 1e9, 1e3);
}

TEST(theoryLink, NothingToSendCostsNothing) {
    EXPECT_EQ(estimateCollectives(kNvlinkH100, CollectiveOp::AllGather, 1e6, 4, 1).seconds(), 0);
    EXPECT_EQ(estimateCollectives(kNvlinkH100, CollectiveOp::AllGather, 1e6, 0, 4).seconds(), 0);
    EXPECT_EQ(estimateCollectives(kNvlinkH100, CollectiveOp::None, 1e6, 4, 4).seconds(), 0);
}

} // namespace
} // namespace shardscope::theory
