// Pipeline schedules (plan/pipeline.h) against their closed forms (theory/pipeline.h): every
// schedule's order runs every op once without a deadlock for every P ≤ 8, M ≤ 16, V ≤ 4, its
// bubble is the literature's formula and each stage holds the activations the formula says.
#include "core/error.h"
#include "plan/pipeline.h"
#include "theory/pipeline.h"

#include <gtest/gtest.h>
#include <map>
#include <tuple>

using namespace shardscope;
using plan::PipeOp;
using plan::PipeOpKind;
using plan::PipeSchedule;
using plan::PipeShape;

namespace {

// Every valid shape with P ≤ 8, M ≤ 16, V ≤ 4 for the schedule.
std::vector<PipeShape> shapesOf(PipeSchedule s) {
    std::vector<PipeShape> out;
    for (int p = 1; p <= 8; ++p)
        for (int m = 1; m <= 16; ++m)
            for (int v = 1; v <= 4; ++v) {
                const PipeShape shape{p, m, v};
                if (plan::validatePipe(s, shape, 32).empty()) out.push_back(shape);
            }
    return out;
}

plan::GptShape smallGpt(std::int64_t layers) {
    return {layers, 16, 2, 50, 8, 1}; // L, d, heads, vocab, seq, T
}

std::string nameOf(PipeSchedule s, const PipeShape& shape) {
    return std::string(plan::traits(s).flag) + " P=" + std::to_string(shape.stages) +
           " M=" + std::to_string(shape.microBatches) + " V=" + std::to_string(shape.virtualStages);
}

} // namespace

TEST(pipeSchedule, FlagsNameEverySchedule) {
    for (const auto& t : plan::kPipeScheduleTraits)
        EXPECT_EQ(plan::pipeScheduleFromFlag(t.flag), t.kind);
    EXPECT_FALSE(plan::pipeScheduleFromFlag("1F1B").has_value());
    EXPECT_FALSE(plan::pipeScheduleFromFlag("").has_value());
}

TEST(pipeSchedule, BadShapesAreOneLineNamingTheFlag) {
    const auto bad = [](PipeSchedule s, PipeShape shape, int layers, const std::string& words) {
        const std::string why = plan::validatePipe(s, shape, layers);
        EXPECT_NE(why.find(words), std::string::npos) << why;
        EXPECT_EQ(why.find('\n'), std::string::npos);
    };
    bad(PipeSchedule::OneFOneB, {5, 8, 1}, 4, "5 stages for a model of 4 layers");
    bad(PipeSchedule::GPipe, {2, 0, 1}, 4, "--micro-batches 0");
    bad(PipeSchedule::OneFOneB, {0, 4, 1}, 4, "--pp 0");
    bad(PipeSchedule::ZeroBubbleH1, {2, 4, 2}, 8, "has no virtual stages");
    bad(PipeSchedule::Interleaved, {2, 4, 1}, 8, "at least 2");
    bad(PipeSchedule::Interleaved, {4, 6, 2}, 8, "multiple of --pp (M = 6, P = 4)");
    bad(PipeSchedule::Interleaved, {2, 4, 3}, 5, "2 × --virtual-stages 3 = 6 stages");
    EXPECT_EQ(plan::validatePipe(PipeSchedule::Interleaved, {2, 4, 2}, 4), "");
    EXPECT_EQ(plan::validatePipe(PipeSchedule::GPipe, {3, 1, 1}, 3), "");
}

TEST(pipeSchedule, LayersSplitEvenlyEarlierStagesTakeTheRest) {
    EXPECT_EQ(plan::stageFirstLayers(10, 4), (std::vector<int>{0, 3, 6, 8, 10}));
    EXPECT_EQ(plan::stageFirstLayers(4, 4), (std::vector<int>{0, 1, 2, 3, 4}));
    EXPECT_EQ(plan::stageFirstLayers(7, 1), (std::vector<int>{0, 7}));
}

// Every stage runs forward and backward (and W where split) of every micro-batch and chunk
// exactly once, and the order finishes: every send has its receive.
TEST(pipeSchedule, EveryOrderRunsEveryOpOnceWithoutDeadlock) {
    int shapes = 0;
    for (const auto& t : plan::kPipeScheduleTraits)
        for (const PipeShape& shape : shapesOf(t.kind)) {
            ++shapes;
            const auto order = plan::pipeOrder(t.kind, shape);
            ASSERT_EQ(order.size(), static_cast<std::size_t>(shape.stages));
            for (const auto& ops : order) {
                std::map<std::tuple<int, int, int>, int> seen;
                for (const PipeOp& op : ops)
                    ++seen[{static_cast<int>(op.kind), op.microBatch, op.chunk}];
                const std::size_t kinds = t.splitBackward ? 3 : 2;
                ASSERT_EQ(seen.size(), kinds * static_cast<std::size_t>(shape.microBatches *
                                                                        shape.virtualStages))
                    << nameOf(t.kind, shape);
                for (const auto& [key, n] : seen)
                    ASSERT_EQ(n, 1) << nameOf(t.kind, shape);
            }
            const plan::PipeRun run = plan::runPipe(shape, t.splitBackward, order, {1, 1, 1});
            ASSERT_FALSE(run.deadlock) << nameOf(t.kind, shape) << ": " << run.stuck;
        }
    EXPECT_GT(shapes, 500);
}

TEST(pipeSchedule, AnOrderThatWaitsInACycleNamesTheStage) {
    const PipeShape shape{2, 1, 1};
    const std::vector<std::vector<PipeOp>> order = {
        {{PipeOpKind::Backward, 0, 0}, {PipeOpKind::Forward, 0, 0}},
        {{PipeOpKind::Forward, 0, 0}, {PipeOpKind::Backward, 0, 0}}};
    const plan::PipeRun run = plan::runPipe(shape, false, order, {});
    EXPECT_TRUE(run.deadlock);
    EXPECT_NE(run.stuck.find("stage 0 waits forever at its op 0 (backward of micro-batch 0"),
              std::string::npos)
        << run.stuck;
}

// The measured bubble of every stage is the schedule's formula: GPipe, 1F1B and interleaved at
// unequal forward and backward times, ZB-H1 at the paper's equal F, B and W.
TEST(pipeTheory, EveryStagesBubbleIsTheSchedulesFormula) {
    for (const auto& t : plan::kPipeScheduleTraits) {
        const plan::PipeOpTimes times =
            t.splitBackward ? plan::PipeOpTimes{2, 2, 2} : plan::PipeOpTimes{1, 1.5, 0.5};
        for (const PipeShape& shape : shapesOf(t.kind)) {
            const plan::PipeRun run =
                plan::runPipe(shape, t.splitBackward, plan::pipeOrder(t.kind, shape), times);
            const double expect = theory::pipeBubble(t.kind, shape, times);
            for (int s = 0; s < shape.stages; ++s)
                ASSERT_NEAR(run.bubble(s), expect, 1e-9) << nameOf(t.kind, shape) << " stage " << s;
        }
    }
}

// ZB-H1 at unequal times, W beyond B among them: the share of the step the schedule idles, never
// the closed form's (which undercounts the drain there, negative at F = B = 1, W = 2.5).
TEST(pipeTheory, ZeroBubbleAtUnequalTimesIsTheScheduleRunOnThem) {
    for (const plan::PipeOpTimes times :
         {plan::PipeOpTimes{16.9, 10.9, 12.2}, plan::PipeOpTimes{10, 5, 8},
          plan::PipeOpTimes{1, 1, 2.5}, plan::PipeOpTimes{1, 1.2, 0.8}})
        for (const PipeShape& shape : shapesOf(PipeSchedule::ZeroBubbleH1)) {
            const plan::PipeRun run = plan::runPipe(
                shape, true, plan::pipeOrder(PipeSchedule::ZeroBubbleH1, shape), times);
            const double b = theory::pipeBubble(PipeSchedule::ZeroBubbleH1, shape, times);
            EXPECT_NEAR(b, run.bubble(0), 1e-9) << nameOf(PipeSchedule::ZeroBubbleH1, shape);
            EXPECT_GE(b, 0.0);
        }
    EXPECT_NEAR(theory::pipeBubble(PipeSchedule::ZeroBubbleH1, {4, 8, 1}, {10, 5, 8}), 0.140,
                0.001); // 10.2 % by the closed form
}

// ZB-H1 keeps its bubble below 1F1B's at the same work (B + W = 1F1B's backward) everywhere.
TEST(pipeTheory, ZeroBubbleNeverIdlesMoreThan1F1B) {
    for (const PipeShape& shape : shapesOf(PipeSchedule::ZeroBubbleH1)) {
        const auto zb = plan::runPipe(
            shape, true, plan::pipeOrder(PipeSchedule::ZeroBubbleH1, shape), {1, 1.2, 0.8});
        const auto ofob = plan::runPipe(
            shape, false, plan::pipeOrder(PipeSchedule::OneFOneB, shape), {1, 1.2, 0.8});
        EXPECT_LE(zb.makespan, ofob.makespan + 1e-9) << nameOf(PipeSchedule::ZeroBubbleH1, shape);
        if (shape.stages > 1 && shape.microBatches > 1) {
            EXPECT_LT(zb.makespan, ofob.makespan) << nameOf(PipeSchedule::ZeroBubbleH1, shape);
        }
    }
}

TEST(pipeTheory, EachStageHoldsTheActivationsOfTheFormula) {
    for (const auto& t : plan::kPipeScheduleTraits)
        for (const PipeShape& shape : shapesOf(t.kind)) {
            const plan::PipeRun run =
                plan::runPipe(shape, t.splitBackward, plan::pipeOrder(t.kind, shape), {1, 1, 1});
            for (int s = 0; s < shape.stages; ++s)
                ASSERT_EQ(run.peakInFlight[static_cast<std::size_t>(s)],
                          theory::pipeActivationsInFlight(t.kind, shape, s))
                    << nameOf(t.kind, shape) << " stage " << s;
        }
}

// A stage holds contiguous layers, the embedding on the first stage and the head on the last; an
// uneven split gives earlier stages the extra layer; every unit lands on exactly one stage.
TEST(pipeTheory, StagesSplitTheModelsUnits) {
    plan::GptShape gpt = smallGpt(5);
    const auto stages = theory::pipeStages(gpt, {2, 4, 1});
    ASSERT_EQ(stages.size(), 2u);
    EXPECT_EQ(stages[0].layers, (std::vector<std::pair<int, int>>{{0, 3}}));
    EXPECT_EQ(stages[1].layers, (std::vector<std::pair<int, int>>{{3, 5}}));
    EXPECT_TRUE(stages[0].embedding && !stages[0].head && stages[1].head && !stages[1].embedding);
    EXPECT_EQ(stages[0].units.front().name, "embedding");
    EXPECT_EQ(stages[1].units.back().name, "head");
    EXPECT_EQ(stages[0].params + stages[1].params, plan::paramCount(gpt));
    // Interleaved: rank 0 holds virtual stages 0 and 2, rank 1 stages 1 and 3 (and the head).
    gpt.layers = 4;
    const auto chunks = theory::pipeStages(gpt, {2, 2, 2});
    EXPECT_EQ(chunks[0].layers, (std::vector<std::pair<int, int>>{{0, 1}, {2, 3}}));
    EXPECT_EQ(chunks[1].layers, (std::vector<std::pair<int, int>>{{1, 2}, {3, 4}}));
    EXPECT_EQ(chunks[0].params + chunks[1].params, plan::paramCount(gpt));
    EXPECT_THROW(theory::pipeStages(gpt, {5, 4, 1}), Error);
}

// The activations a stage holds: its chunk's bytes per micro-batch times what the schedule keeps
// in flight (GPipe every micro-batch, 1F1B P − s); ZB-H1 holds them until W, but only the linear
// layers' inputs between B and W: less than whole chunks. A stage but the last holds its forward's
// output a moment more, until it leaves for the next stage. (The ledger's measurement of each is
// tests/unit/pipeline_parallel_test.cpp's.)
TEST(pipeTheory, StageActivationsAreTheScheduleTimesTheChunk) {
    const plan::GptShape gpt = smallGpt(4);
    const plan::ActivationConfig cfg{2, false};
    const PipeShape shape{2, 4, 1};
    for (const auto& t : plan::kPipeScheduleTraits) {
        if (t.virtualStages) continue;
        const auto act = theory::pipeActivations(t.kind, shape, gpt, cfg);
        for (int s = 0; s < 2; ++s) {
            const auto& a = act[static_cast<std::size_t>(s)];
            EXPECT_EQ(a.heldChunks, theory::pipeActivationsInFlight(t.kind, shape, s));
            const std::uint64_t boundary =
                s == 0 ? static_cast<std::uint64_t>(2 * gpt.seqLen * gpt.dModel) * 4 : 0;
            const std::uint64_t whole =
                static_cast<std::uint64_t>(a.heldChunks) * a.perMicroBatchBytes + boundary;
            if (t.splitBackward) {
                // Stage 0 runs each W right after its B (whole chunks at its peak); the last
                // stage's next forward comes before its W, on top of a B's kept part only.
                EXPECT_LE(a.peakBytes, whole) << t.flag << " stage " << s;
                EXPECT_GT(a.peakBytes, whole - a.perMicroBatchBytes) << t.flag << " stage " << s;
                if (s == 1) {
                    EXPECT_LT(a.peakBytes, whole) << t.flag;
                }
            } else {
                EXPECT_EQ(a.peakBytes, whole) << t.flag << " stage " << s;
            }
        }
    }
    const auto gp = theory::pipeActivations(PipeSchedule::GPipe, shape, gpt, cfg);
    EXPECT_GT(gp[0].perMicroBatchBytes, 0u);
    EXPECT_EQ(gp[0].peakBytes, 4 * gp[0].perMicroBatchBytes +
                                   static_cast<std::uint64_t>(2 * gpt.seqLen * gpt.dModel) * 4);
}
