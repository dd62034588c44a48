// A pipelined run's lines in the report (report_pipeline.h).
#include "train/report_pipeline.h"

#include "plan/pipeline.h"
#include "theory/pipeline.h"

#include <algorithm>
#include <cstdio>

namespace shardscope::train {

// One line per pipeline stage: its ranks and units, its model states and peak against its own
// theory, its messages per step.
void pipelineNotes(const RunConfig& c, const std::vector<theory::ModelStates>& states,
                   const std::vector<theory::PeakPrediction>& predicted,
                   const std::vector<std::uint64_t>& measuredPeak,
                   std::vector<std::string>& notes) {
    const int stages = static_cast<int>(states.size());
    const int perStage = c.worldSize / stages;
    const std::vector<plan::UnitParams> units = plan::unitParams(scenarioOf(c).shape.value());
    const int chunks = std::max(c.virtualStages, 1);
    notes.push_back("pipeline: " + std::to_string(stages) + " stages × " +
                    std::to_string(perStage) + (perStage == 1 ? " rank" : " ranks") + " (T × D), " +
                    (chunks > 1 ? std::to_string(chunks) + " model chunks each, " : std::string()) +
                    std::string(plan::traits(c.pipeSchedule).name) + ", " +
                    std::to_string(c.knobs.gradAccumSteps) +
                    (c.knobs.gradAccumSteps == 1 ? " micro-batch" : " micro-batches") +
                    " per step; each rank is compared with its stage's theory; "
                    "exposed comm includes the pipeline receives' waits, the bubble");
    for (int st = 0; st < stages; ++st) {
        const theory::Scenario s = scenarioOf(c, st);
        std::string held;
        for (const plan::StageUnits& u : s.stageChunks())
            held += (held.empty() ? "" : " + ") + units[static_cast<std::size_t>(u.first)].name +
                    (u.end - u.first > 1 ? " … " + units[static_cast<std::size_t>(u.end - 1)].name
                                         : std::string());
        std::string line =
            "stage " + std::to_string(st) +
            (perStage == 1 ? " (rank " + std::to_string(st)
                           : " (ranks " + std::to_string(st * perStage) + "–" +
                                 std::to_string((st + 1) * perStage - 1)) +
            "): " + held + ", model states " +
            mib(static_cast<double>(states[static_cast<std::size_t>(st)].perRank.total()));
        if (!predicted.empty()) {
            const theory::PeakPrediction& p = predicted[static_cast<std::size_t>(st)];
            const int inFlight = theory::pipeActivationsInFlight(
                c.pipeSchedule, {stages, c.knobs.gradAccumSteps, chunks}, st);
            line += ", peak " +
                    mib(static_cast<double>(measuredPeak[static_cast<std::size_t>(st)])) +
                    " (predicted " + mib(static_cast<double>(p.peakBytes)) + ", activations of " +
                    std::to_string(inFlight) +
                    (chunks > 1 ? (inFlight == 1 ? " micro-batch chunk" : " micro-batch chunks")
                                : (inFlight == 1 ? " micro-batch" : " micro-batches")) +
                    " in flight)";
        }
        for (const theory::CommVolume& v : theory::commPerStep(s).byKind)
            if (v.kind == CollectiveOp::PipeSend)
                line += ", sends " + std::to_string(v.calls) + " messages (" +
                        mib(static_cast<double>(v.sentBytes)) + ") per step";
        notes.push_back(line);
    }
}

// The bubble each stage measured beside the schedule's. Measured: the stage's idle time between
// its first and last forward/backward of a step (median over steps; its ranks averaged), in ms
// and as a share of the step (data-parallel collectives and message copies between the stage's
// compute spans count as idle too). The schedule's: the same idle when its order runs on the
// measured mean forward and backward times (plan::runPipe), in ms — the same quantity — and
// the textbook share of the step, (P − 1)/(M + P − 1) for GPipe and 1F1B.
void bubbleNotes(const RunConfig& c, const std::vector<RankResult>& ranks,
                 std::vector<std::string>& notes) {
    const int stages = std::max(c.pipeParallel, 1), micros = std::max(c.knobs.gradAccumSteps, 1);
    const int perStage = std::max(c.worldSize / stages, 1);
    std::vector<double> idleMs(static_cast<std::size_t>(stages), 0.0),
        share(static_cast<std::size_t>(stages), 0.0);
    std::vector<int> counted(static_cast<std::size_t>(stages), 0);
    double forward = 0, backward = 0, weightGrad = 0;
    int samples = 0;
    for (const RankResult& rr : ranks) {
        std::vector<std::pair<double, double>> idle; // (ns, share of the step)
        for (const StepOverlap& s : rr.overlap) {
            if (s.stepNs == 0 || s.workNs > s.workWindowNs) continue;
            const auto ns = static_cast<double>(s.workWindowNs - s.workNs);
            idle.emplace_back(ns, ns / static_cast<double>(s.stepNs));
            forward += static_cast<double>(s.forwardNs) / micros;
            backward += static_cast<double>(s.backwardNs) / micros;
            weightGrad += static_cast<double>(s.weightGradNs) / micros;
            ++samples;
        }
        if (idle.empty()) continue;
        std::sort(idle.begin(), idle.end());
        const auto st = static_cast<std::size_t>(std::clamp(rr.rank / perStage, 0, stages - 1));
        idleMs[st] += idle[idle.size() / 2].first * 1e-6;
        share[st] += idle[idle.size() / 2].second;
        ++counted[st];
    }
    if (samples == 0) return;
    const plan::PipeOpTimes times{forward / samples, backward / samples, weightGrad / samples};
    const plan::PipeShape shape{stages, micros, std::max(c.virtualStages, 1)};
    const bool split = plan::traits(c.pipeSchedule).splitBackward;
    const plan::PipeRun run =
        plan::runPipe(shape, split, plan::pipeOrder(c.pipeSchedule, shape), times);
    char weightText[64] = "";
    if (split) // ZB-H1's bubble depends on the three times (theory/pipeline.h)
        std::snprintf(weightText, sizeof weightText, ", weight gradients %.3g ms",
                      times.weightGrad * 1e-6);
    char text[1024];
    std::snprintf(text, sizeof text,
                  "bubble: the schedule's textbook share of the step %.1f %%; per stage, its idle "
                  "time between its first and last compute of a step, measured against the "
                  "schedule run on the measured op times (forward %.3g ms, backward %.3g ms%s per "
                  "micro-batch and stage; data-parallel collectives between its compute count as "
                  "idle):",
                  100.0 * theory::pipeBubble(c.pipeSchedule, shape, times), times.forward * 1e-6,
                  times.backward * 1e-6, weightText);
    std::string line = text;
    for (int st = 0; st < stages; ++st) {
        const auto i = static_cast<std::size_t>(st);
        const double n = counted[i] > 0 ? counted[i] : 1.0;
        // runPipe's times are ns; rounding can leave a last stage's nothing at −0.
        const double scheduled = std::max(0.0, run.innerIdle(st) * run.makespan * 1e-6);
        std::snprintf(text, sizeof text,
                      " stage %d %.1f ms (%.1f %% of the step; schedule %.1f ms)%s", st,
                      idleMs[i] / n, 100.0 * share[i] / n, scheduled, st + 1 < stages ? ";" : "");
        line += text;
    }
    notes.push_back(line);
}

} // namespace shardscope::train
