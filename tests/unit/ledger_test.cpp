// Ledger: live/peak per (category, tier), totals, events, capacity errors that name things.
#include "core/error.h"
#include "core/event.h"
#include "core/ledger.h"

#include <gtest/gtest.h>
#include <string>
#include <vector>

namespace shardscope {
namespace {

TEST(ledger, LiveAndPeakPerCellAndTotal) {
    Ledger ledger(3);
    ledger.recordAlloc(Category::Activation, Tier::Device, 100, 1);
    ledger.recordAlloc(Category::Workspace, Tier::Device, 50, 1);
    ledger.recordFree(Category::Activation, Tier::Device, 100, 1);
    ledger.recordAlloc(Category::Workspace, Tier::Device, 70, 2);
    ledger.recordAlloc(Category::MasterFp32, Tier::Host, 8, 0);
    EXPECT_EQ(ledger.live().at(Category::Workspace, Tier::Device), 120u);
    EXPECT_EQ(ledger.peak().at(Category::Activation, Tier::Device), 100u);
    EXPECT_EQ(ledger.peak().at(Category::Workspace, Tier::Device), 120u);
    EXPECT_EQ(ledger.liveBytes(), 128u);
    // The total's peak is the maximum of the sum over time (150 then 128), not Σ cell peaks (228).
    EXPECT_EQ(ledger.peakBytes(), 150u);
    EXPECT_EQ(ledger.peakTierBytes(Tier::Device), 150u);
    EXPECT_EQ(ledger.peakTierBytes(Tier::Host), 8u);
    ledger.resetPeaks();
    EXPECT_EQ(ledger.peakBytes(), 128u);
    EXPECT_EQ(ledger.peak().at(Category::Activation, Tier::Device), 0u);
}

TEST(ledger, EmitsOneEventPerAllocationAndFreeWithMonotonicTime) {
    Ledger ledger(2);
    std::vector<Event> events;
    ledger.setSink([&](const Event& e) { events.push_back(e); });
    ledger.setStep(4);
    ledger.recordAlloc(Category::GradFull, Tier::Device, 64, 3);
    Event span;
    span.kind = EventKind::ComputeBegin;
    span.phase = Phase::Backward;
    span.unit = 3;
    ledger.emit(span);
    ledger.recordFree(Category::GradFull, Tier::Device, 64, 3);
    ASSERT_EQ(events.size(), 3u);
    EXPECT_EQ(events[0].kind, EventKind::Alloc);
    EXPECT_EQ(events[0].category, Category::GradFull);
    EXPECT_EQ(events[0].bytes, 64u);
    EXPECT_EQ(events[0].unit, 3);
    EXPECT_EQ(events[1].kind, EventKind::ComputeBegin);
    EXPECT_EQ(events[1].phase, Phase::Backward);
    EXPECT_EQ(events[2].kind, EventKind::Free);
    for (const Event& e : events) {
        EXPECT_EQ(e.rank, 2);
        EXPECT_EQ(e.step, 4);
    }
    EXPECT_LE(events[0].timeNs, events[1].timeNs);
    EXPECT_LE(events[1].timeNs, events[2].timeNs);
    EXPECT_GT(events[0].timeNs, 0u);
}

TEST(ledger, CapacityErrorNamesCategoryUnitAndBytes) {
    Ledger ledger;
    ledger.setUnitNames({"embedding", "block0", "head"});
    ledger.setCapacity(Tier::Device, 1000);
    ledger.recordAlloc(Category::ParamFull, Tier::Device, 900, 0);
    try {
        ledger.recordAlloc(Category::Activation, Tier::Device, 200, 1);
        FAIL() << "expected OutOfMemory";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::OutOfMemory);
        const std::string m = e.what();
        EXPECT_NE(m.find("activation"), std::string::npos) << m;
        EXPECT_NE(m.find("block0"), std::string::npos) << m;
        EXPECT_NE(m.find("200 bytes"), std::string::npos) << m;
        EXPECT_NE(m.find("1000"), std::string::npos) << m;
    }
    EXPECT_EQ(ledger.liveBytes(), 900u) << "a refused allocation is not counted";
    EXPECT_EQ(ledger.unitName(7), "unit 7");
    ledger.setCapacity(Tier::Device, std::nullopt);
    ledger.recordAlloc(Category::Activation, Tier::Device, 1u << 30, 1);
    EXPECT_EQ(ledger.liveBytes(), 900u + (1u << 30));
}

TEST(ledger, EventNamesAreTheWireVocabulary) {
    EXPECT_EQ(eventKindName(EventKind::Alloc), "alloc");
    EXPECT_EQ(eventKindName(EventKind::StepEnd), "step_end");
    EXPECT_EQ(phaseName(Phase::Recompute), "recompute");
    EXPECT_EQ(collectiveOpName(CollectiveOp::ReduceScatter), "reduce_scatter");
}

} // namespace
} // namespace shardscope
