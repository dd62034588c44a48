// The replay's data layer: the assembler merges ranks' batches into steps, the ledger at event
// k equals a straightforward recomputation from the raw records, and seeking (snapshots) equals
// playing (event by event). Also: tolerant handshake parsing and the plotted memory series.
#include "core/error.h"
#include "ledger_reference.h"
#include "replay/rank_series.h"
#include "replay/replay_model.h"
#include "replay/stream_assembler.h"
#include "synthetic_stream.h"

#include <algorithm>
#include <fstream>
#include <gtest/gtest.h>
#include <iterator>
#include <limits>
#include <random>
#include <string>

using namespace shardscope;
using namespace shardscope::replay;
using shardscope::testing::SyntheticRun;

namespace {

// Decodes `bytes` fed in pieces of the given sizes (cycled) into a model.
void load(ReplayModel& model, const std::string& bytes,
          std::vector<std::size_t> pieces = {1 << 20}) {
    protocol::StreamDecoder decoder;
    StreamAssembler assembler;
    std::size_t at = 0;
    for (std::size_t i = 0; at < bytes.size(); ++i) {
        const std::size_t n = std::min(pieces[i % pieces.size()], bytes.size() - at);
        decoder.feed(std::string_view(bytes).substr(at, n));
        at += n;
        while (auto r = decoder.next())
            assembler.consume(std::move(*r));
        auto out = assembler.take();
        if (out.runInfo) model.reset(out.runInfo);
        model.append(out.steps);
    }
    assembler.flushPartialStep();
    model.append(assembler.take().steps);
}

} // namespace

TEST(ReplayModel, ledgerAtEveryEventEqualsRecomputation) {
    SyntheticRun run;
    run.ranks = 4;
    run.units = 40; // several thousand events per step: seeks cross snapshots
    run.steps = 3;
    const std::string bytes = shardscope::testing::syntheticStream(run);
    ReplayModel model;
    load(model, bytes);
    const shardscope::testing::Reference ref(bytes);
    EXPECT_EQ(model.stepCount(), std::size_t{3});
    EXPECT_EQ(model.eventCount(), ref.order.size());
    EXPECT_TRUE(model.step(0).snapshots.size() > 1);
    std::string why;
    for (std::uint64_t k = 0; k <= model.eventCount(); k += 37)
        EXPECT_TRUE(sameAsReference(ref, model.stateAt(k), k, &why)) << why;
    EXPECT_TRUE(sameAsReference(ref, model.stateAt(model.eventCount()), model.eventCount(), &why))
        << why;
    // Transient buffers are gone at the end of a step; the model states stay.
    const RankState& end = model.step(0).endState[1];
    EXPECT_EQ(end.live.category(Category::ParamFull), std::uint64_t{0});
    EXPECT_TRUE(end.live.category(Category::AdamV) > 0);
}

// The real worker's recording (tiny, ZeRO-3, 2 ranks, 2 steps): every k, byte for byte.
TEST(ReplayModel, goldenRecordingLedgerEqualsRecomputation) {
    std::ifstream file(SHARDSCOPE_SOURCE_DIR "/tests/data/golden_zero3_tiny_2r.sstrace",
                       std::ios::binary);
    if (!file) GTEST_SKIP() << "tests/data/golden_zero3_tiny_2r.sstrace is missing";
    const std::string bytes((std::istreambuf_iterator<char>(file)),
                            std::istreambuf_iterator<char>());
    ReplayModel model;
    load(model, bytes, {4096});
    const shardscope::testing::Reference ref(bytes);
    EXPECT_EQ(model.worldSize(), 2);
    EXPECT_EQ(model.stepCount(), std::size_t{2});
    EXPECT_EQ(model.eventCount(), ref.order.size());
    std::string why;
    for (std::uint64_t k = 0; k <= model.eventCount(); ++k)
        EXPECT_TRUE(sameAsReference(ref, model.stateAt(k), k, &why)) << why;
    // What the worker measured at the end equals what its theory said (model states).
    const RunInfo& info = *model.info();
    EXPECT_TRUE(info.theoryModelStates.has_value());
    for (Category c : kAllCategories)
        if (stateGroup(c) != StateGroup::Other) {
            EXPECT_EQ(model.steps().back()->endState[0].live.category(c),
                      (*info.theoryModelStates)[index(c)]);
        }
}

// What a recording says sizes nothing until it is cross-checked: each of these crashed (an
// out-of-bounds write, std::length_error, std::bad_alloc) before they were refused.
namespace {
std::string goldenBytes() {
    std::ifstream file(SHARDSCOPE_SOURCE_DIR "/tests/data/golden_zero3_tiny_2r.sstrace",
                       std::ios::binary);
    return {(std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>()};
}
std::string formatErrorOf(const std::string& bytes) {
    try {
        ReplayModel model;
        load(model, bytes);
        for (std::uint64_t k = 0; k <= model.eventCount(); k += 7)
            (void)model.stateAt(k);
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Format);
        return e.what();
    }
    return {};
}
} // namespace

TEST(ReplayModel, configWorldSizeDisagreeingWithTheHandshakeIsRefused) {
    std::string bytes = goldenBytes();
    if (bytes.empty()) GTEST_SKIP() << "tests/data/golden_zero3_tiny_2r.sstrace is missing";
    const auto at = bytes.find("\"world_size\":2");
    ASSERT_NE(at, std::string::npos);
    bytes[at + 13] = '3'; // one flipped bit: '2' is 0x32; the checksum notices
    EXPECT_NE(formatErrorOf(bytes).find("damaged at byte 12:"), std::string::npos)
        << formatErrorOf(bytes);
    // The same change with valid checksums (a writer that lied): the replay cross-checks.
    for (const char* world : {"3", "1", "4096"}) {
        std::string relabelled;
        protocol::writeHeader(relabelled);
        protocol::StreamDecoder decoder;
        decoder.feed(goldenBytes());
        while (auto r = decoder.next()) {
            if (auto* h = std::get_if<protocol::Handshake>(&*r))
                h->configJson.replace(h->configJson.find("\"world_size\":2"), 14,
                                      std::string("\"world_size\":") + world);
            protocol::writeRecord(relabelled, *r);
        }
        const std::string why = formatErrorOf(relabelled);
        EXPECT_NE(why.find(std::string("world size ") + world), std::string::npos) << why;
    }
}

TEST(ReplayModel, worldSizeIsBoundedBeforeItSizesAnything) {
    for (const std::int32_t world : {-3, 0, protocol::kMaxWorldSize + 1, 1 << 30}) {
        std::string bytes;
        protocol::writeHeader(bytes);
        // writeRecord's encoder does not validate; the reader must.
        protocol::writeRecord(bytes, protocol::Handshake{0, world, "{}"});
        protocol::writeRecord(bytes, protocol::StepSummary{0, 1, 1});
        const std::string why = formatErrorOf(bytes);
        EXPECT_NE(why.find("world size"), std::string::npos) << world << ": " << why;
    }
    const std::string config = "{\"world_size\": -2}";
    std::string bytes;
    protocol::writeHeader(bytes);
    protocol::writeRecord(bytes, protocol::Handshake{0, 2, config});
    EXPECT_FALSE(formatErrorOf(bytes).empty());
}

TEST(ReplayModel, replayMemoryStaysProportionalToTheStream) {
    // The largest world a stream may name, and thousands of 29-byte empty steps: each would keep
    // two full ledger states (megabytes) if nothing counted them.
    std::string bytes;
    protocol::writeHeader(bytes);
    protocol::writeRecord(bytes, protocol::Handshake{0, protocol::kMaxWorldSize, "{}"});
    for (std::int64_t s = 0; s < 20000; ++s)
        protocol::writeRecord(bytes, protocol::StepSummary{s, 1, 1});
    const std::string why = formatErrorOf(bytes);
    EXPECT_NE(why.find("MiB of replay state"), std::string::npos) << why;
}

TEST(ReplayModel, eventsForUnitsTheModelDoesNotHaveAreRefused) {
    std::string bytes;
    protocol::writeHeader(bytes);
    protocol::writeRecord(
        bytes, protocol::Handshake{0, SyntheticRun{}.ranks,
                                   shardscope::testing::syntheticConfig(SyntheticRun{})});
    Event e;
    e.unit = 4; // the synthetic model has units 0–3
    protocol::writeRecord(bytes, protocol::EventBatch{0, {e}});
    EXPECT_NE(formatErrorOf(bytes).find("unit 4 of a model with 4 units"), std::string::npos)
        << formatErrorOf(bytes);
}

// A failure message is the file's text: shown escaped and capped, never interpreted.
TEST(ReplayModel, failureTextIsEscapedAndCapped) {
    StreamAssembler a;
    a.consume(protocol::Handshake{0, 1, "{}"});
    a.consume(protocol::Failure{0, 0, "rank 0: \x1b[2J<b>gone</b>\n" + std::string(10000, 'x')});
    const auto out = a.take();
    ASSERT_EQ(out.failures.size(), std::size_t{1});
    const std::string& m = out.failures[0].message;
    EXPECT_EQ(m.rfind("rank 0: \\x1b[2J<b>gone</b>\\n", 0), std::size_t{0}) << m;
    EXPECT_EQ(m.find('\x1b'), std::string::npos);
    EXPECT_LT(m.size(), std::size_t{2100});
    EXPECT_TRUE(a.ended());
}

TEST(ReplayModel, stepsOutOfOrderAreRefused) {
    std::string bytes;
    protocol::writeHeader(bytes);
    protocol::writeRecord(bytes, protocol::Handshake{0, 1, "{}"});
    protocol::writeRecord(bytes, protocol::StepSummary{3, 1, 1});
    protocol::writeRecord(bytes, protocol::StepSummary{3, 1, 1});
    EXPECT_NE(formatErrorOf(bytes).find("step 3"), std::string::npos);
    std::string huge;
    protocol::writeHeader(huge);
    protocol::writeRecord(huge, protocol::Handshake{0, 1, "{}"});
    protocol::writeRecord(huge, protocol::StepSummary{INT64_MAX, 1, 1});
    protocol::writeRecord(huge, protocol::Failure{0, 0, "x"});
    EXPECT_FALSE(formatErrorOf(huge).empty());
}

// A run recorded with --no-events has steps but no events: every query past the end clamps.
TEST(ReplayModel, aRunWithoutEventsAnswersEveryQuery) {
    std::string bytes;
    protocol::writeHeader(bytes);
    protocol::writeRecord(bytes, protocol::Handshake{0, 2, "{}"});
    protocol::writeRecord(bytes, protocol::StepSummary{0, 1, 1});
    protocol::writeRecord(bytes, protocol::StepSummary{1, 1, 1});
    protocol::writeRecord(bytes, protocol::End{});
    ReplayModel model;
    load(model, bytes);
    EXPECT_EQ(model.stepCount(), std::size_t{2});
    EXPECT_EQ(model.eventCount(), std::uint64_t{0});
    EXPECT_EQ(model.replayNsAt(5), std::uint64_t{0});
    EXPECT_EQ(model.stateAt(5).size(), std::size_t{2});
    ReplayCursor cursor(model);
    cursor.moveTo(7);
    EXPECT_EQ(cursor.index(), std::uint64_t{0});
}

// A step's events play in time order, a tie in rank order and, within a rank, in the order it
// sent them; a rank whose batch is out of time order is put in order, not trusted.
TEST(ReplayModel, eventsPlayInTimeOrderWithTiesInRankOrder) {
    const auto ev = [](std::uint64_t t, std::uint64_t tag) {
        Event e;
        e.timeNs = t;
        e.bytes = tag; // names the event
        e.step = 0;
        return e;
    };
    StreamAssembler a;
    a.consume(protocol::Handshake{0, 4, "{}"});
    a.consume(protocol::EventBatch{2, {ev(5, 20), ev(5, 21), ev(9, 22)}});
    a.consume(protocol::EventBatch{0, {ev(5, 1), ev(3, 2), ev(5, 3)}}); // out of order
    a.consume(protocol::EventBatch{3, {ev(1, 30)}});
    a.consume(protocol::EventBatch{1, {ev(5, 10)}});
    a.consume(protocol::StepSummary{0, 1, 1});
    const auto out = a.take();
    ASSERT_EQ(out.steps.size(), std::size_t{1});
    std::vector<std::uint64_t> tags;
    for (const Event& e : out.steps[0]->events)
        tags.push_back(e.bytes);
    EXPECT_EQ(tags, (std::vector<std::uint64_t>{30, 2, 1, 3, 10, 20, 21, 22}));
}

TEST(ReplayModel, splitFeedingGivesTheSameSteps) {
    const std::string bytes = shardscope::testing::syntheticStream(SyntheticRun{});
    ReplayModel whole, bytewise;
    load(whole, bytes);
    load(bytewise, bytes, {1, 7, 41, 3});
    EXPECT_EQ(bytewise.eventCount(), whole.eventCount());
    EXPECT_TRUE(bytewise.stateAt(whole.eventCount() / 2) == whole.stateAt(whole.eventCount() / 2));
}

TEST(ReplayModel, scrubbingEqualsPlaying) {
    SyntheticRun run;
    run.ranks = 3;
    run.units = 60;
    const std::string bytes = shardscope::testing::syntheticStream(run);
    ReplayModel model;
    load(model, bytes);
    ReplayCursor cursor(model);
    cursor.reset();
    std::mt19937 rng(42);
    for (int i = 0; i < 300; ++i) {
        const bool jump = rng() % 4 == 0;
        const std::uint64_t k = jump ? rng() % (model.eventCount() + 1)
                                     : std::min(model.eventCount(), cursor.index() + rng() % 50);
        cursor.moveTo(k);
        EXPECT_EQ(cursor.index(), k);
        EXPECT_TRUE(cursor.state() == model.stateAt(k)) << "k=" << k;
    }
    // Play every event from the start: identical to seeking at each k.
    cursor.reset();
    for (std::uint64_t k = 0; k <= model.eventCount(); ++k) {
        cursor.moveTo(k);
        if (k % 101 == 0) {
            EXPECT_TRUE(cursor.state() == model.stateAt(k));
        }
    }
}

TEST(ReplayModel, replayClockSkipsIdleTimeAndIsMonotonic) {
    ReplayModel model;
    load(model, shardscope::testing::syntheticStream(SyntheticRun{}));
    const auto& s0 = model.step(0);
    const auto& s1 = model.step(1);
    EXPECT_EQ(s1.replayStartNs,
              s0.replayStartNs + s0.durationNs + 1); // the 5 ms between steps is gone
    std::uint64_t previous = 0;
    for (std::uint64_t k = 1; k <= model.eventCount(); ++k) {
        const std::uint64_t t = model.replayNsAt(k);
        EXPECT_TRUE(t >= previous);
        previous = t;
        EXPECT_TRUE(model.indexAtReplayNs(t) >= k);
    }
    EXPECT_EQ(model.indexAtReplayNs(model.totalReplayNs()), model.eventCount());
    EXPECT_EQ(model.indexAtReplayNs(0), std::uint64_t{1}); // the first event happens at t = 0
}

TEST(ReplayModel, peakEventIsTheBusiestMoment) {
    ReplayModel model;
    load(model, shardscope::testing::syntheticStream(SyntheticRun{}));
    const StepData& s = model.step(1);
    const LedgerState at = model.stateAt(s.peakEvent);
    std::uint64_t highest = 0;
    for (std::uint64_t k = s.firstEvent; k <= s.endEvent(); ++k)
        for (const RankState& r : model.stateAt(k))
            highest = std::max(highest, r.liveTotal);
    std::uint64_t atPeak = 0;
    for (const RankState& r : at)
        atPeak = std::max(atPeak, r.liveTotal);
    EXPECT_EQ(atPeak, highest);
    EXPECT_TRUE(std::any_of(at.begin(), at.end(), [](const RankState& r) {
        return r.live.category(Category::ParamFull) > 0 || r.live.category(Category::GradFull) > 0;
    }));
}

TEST(ReplayModel, failureClosesAPartialStep) {
    SyntheticRun run;
    run.failRank = 1;
    ReplayModel model;
    StreamAssembler assembler;
    protocol::StreamDecoder decoder;
    decoder.feed(shardscope::testing::syntheticStream(run));
    std::vector<FailureInfo> failures;
    while (auto r = decoder.next())
        assembler.consume(std::move(*r));
    auto out = assembler.take();
    EXPECT_EQ(out.steps.size(), std::size_t{2});
    EXPECT_TRUE(out.steps[0]->complete);
    EXPECT_TRUE(!out.steps[1]->complete);
    EXPECT_EQ(out.failures.size(), std::size_t{1});
    EXPECT_EQ(out.failures[0].rank, 1);
    EXPECT_NE(out.failures[0].message.find("activation"), std::string::npos);
}

TEST(ReplayModel, inconsistentStreamsAreFormatErrors) {
    StreamAssembler a;
    protocol::EventBatch early{0, {Event{}}};
    EXPECT_THROW(a.consume(early), Error);
    StreamAssembler b;
    b.consume(protocol::Handshake{0, 2, "{}"});
    try {
        b.consume(protocol::EventBatch{5, {Event{}}});
        FAIL() << "rank 5 of 2 accepted";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::Format);
        EXPECT_NE(std::string(e.what()).find("rank 5"), std::string::npos);
    }
    StreamAssembler c;
    EXPECT_THROW(c.consume(protocol::Handshake{0, 1, "not json"}), Error);
    // A step is counted on after a resume and shown: one past 2^53 is no step (it overflowed).
    Event far;
    far.step = std::numeric_limits<std::int64_t>::max();
    StreamAssembler d;
    d.consume(protocol::Handshake{0, 1, "{}"});
    EXPECT_THROW(d.consume(protocol::EventBatch{0, {far}}), Error);
    StreamAssembler f;
    f.consume(protocol::Handshake{0, 1, "{}"});
    EXPECT_THROW(f.consume(protocol::Failure{0, far.step, "x"}), Error);
}

TEST(ReplayModel, runInfoToleratesMissingAndUnknownKeys) {
    const RunInfo full = parseRunInfo(shardscope::testing::syntheticConfig(SyntheticRun{}), 2);
    EXPECT_EQ(full.strategy, std::string("zero3"));
    EXPECT_EQ(full.units.size(), std::size_t{4});
    EXPECT_EQ(full.unitName(2), std::string("block2"));
    EXPECT_TRUE(full.theoryModelStates.has_value());
    EXPECT_TRUE(!full.capacityBytes.has_value()); // null
    const RunInfo bare = parseRunInfo("{\"strategy\": 3, \"units\": \"x\"}", 8);
    EXPECT_EQ(bare.worldSize, 8);
    EXPECT_TRUE(bare.strategy.empty());
    EXPECT_TRUE(bare.units.empty());
    EXPECT_EQ(bare.unitName(3), std::string("unit 3"));
}

TEST(ReplayModel, seriesCapKeepsThePeak) {
    ReplayModel model;
    SyntheticRun run;
    run.units = 50;
    load(model, shardscope::testing::syntheticStream(run));
    const auto full = rankSeries(model.step(0), 0, 1'000'000);
    const auto capped = capSeries(full, 40);
    EXPECT_TRUE(capped.size() <= 41);
    std::uint64_t maxFull = 0, maxCapped = 0;
    for (const auto& p : full)
        maxFull = std::max(maxFull, p.total());
    for (const auto& p : capped)
        maxCapped = std::max(maxCapped, p.total());
    EXPECT_EQ(maxCapped, maxFull);
    EXPECT_EQ(capped.back().replayNs, full.back().replayNs);
}
