#include "estimate_pipeline.h"

#include "core/error.h"
#include "estimate_common.h"

#include <algorithm>
#include <cstdio>

namespace shardscope::cli {

namespace {

std::vector<plan::PipeSchedule> schedulesFlag(const Args& args) {
    const std::string text = args.value("--pp-schedule").value_or("all");
    std::vector<plan::PipeSchedule> out;
    const auto add = [&](plan::PipeSchedule k) { // each once, in the order first named
        if (std::find(out.begin(), out.end(), k) == out.end()) out.push_back(k);
    };
    forEachListed("--pp-schedule", text, "gpipe, 1f1b, interleaved, zb1, all",
                  [&](const std::string& name) {
                      if (name == "all") {
                          for (const auto& t : plan::kPipeScheduleTraits)
                              add(t.kind);
                      } else if (const auto s = plan::pipeScheduleFromFlag(name)) {
                          add(*s);
                      } else {
                          return false;
                      }
                      return true;
                  });
    return out;
}

std::string layersText(const theory::PipeStage& st) {
    std::string out;
    for (const auto& [lo, hi] : st.layers) {
        if (!out.empty()) out += ", ";
        out +=
            hi - lo == 1 ? std::to_string(lo) : std::to_string(lo) + "-" + std::to_string(hi - 1);
    }
    if (st.embedding) out += " + embedding";
    if (st.head) out += " + head";
    return out;
}

} // namespace

std::optional<PipelineEstimate> pipelineFlags(const Args& args, theory::Scenario& s) {
    if (!args.has("--pp")) {
        for (const char* f : {"--micro-batches", "--pp-schedule", "--virtual-stages"})
            if (args.has(f)) throwInvalid(std::string(f) + " goes with --pp P (pipeline stages)");
        return std::nullopt;
    }
    if (!s.shape) throwInvalid("--pp needs --model-shape (a pipeline splits the model's layers)");
    PipelineEstimate p;
    p.gpt = *s.shape;
    p.stages = static_cast<int>(args.integer("--pp", 1, plan::kMaxPipeStages));
    if (!args.has("--micro-batches"))
        throwInvalid("--pp needs --micro-batches M (the micro-batches of a step, which fill the "
                     "pipeline)");
    p.microBatches = static_cast<int>(args.integer("--micro-batches", 1, plan::kMaxMicroBatches));
    p.microBatch = s.activations.microBatch;
    if (s.ranks % p.stages != 0)
        throwInvalid(
            "--pp " + std::to_string(p.stages) + " does not divide the " + std::to_string(s.ranks) +
            " ranks" +
            (s.shape->tp > 1 ? " left by --tp (--ranks / T)" : std::string(" of --ranks")));
    p.dataRanks = s.ranks / p.stages;
    if (s.knobs.hybridGroupSize > 0 && p.dataRanks % s.knobs.hybridGroupSize != 0)
        throwInvalid("--hybrid-group " + std::to_string(s.knobs.hybridGroupSize) +
                     " does not divide the " + std::to_string(p.dataRanks) +
                     " data-parallel ranks (--ranks / (P·T))");
    // The whole model's activations must fit 64 bits before a stage's are summed (validate
    // checks them, naming --micro-batch, as without --pp).
    theory::validate(s);
    const std::vector<plan::PipeSchedule> kinds = schedulesFlag(args);
    const bool askedV = args.has("--virtual-stages");
    const int v =
        askedV ? static_cast<int>(args.integer("--virtual-stages", 1, plan::kMaxVirtualStages)) : 2;
    const bool onlyOne = kinds.size() == 1;
    const bool anyInterleaved = std::any_of(kinds.begin(), kinds.end(), [](plan::PipeSchedule k) {
        return plan::traits(k).virtualStages;
    });
    if (askedV && !anyInterleaved && !onlyOne)
        throwInvalid("--virtual-stages " + std::to_string(v) +
                     ": only interleaved has virtual stages, and --pp-schedule does not list it");
    std::string firstProblem;
    for (plan::PipeSchedule k : kinds) {
        const plan::PipeScheduleTraits& t = plan::traits(k);
        const plan::PipeShape shape{p.stages, p.microBatches, t.virtualStages ? v : 1};
        if (onlyOne && askedV && !t.virtualStages && v > 1)
            throwInvalid(plan::validatePipe(k, {p.stages, p.microBatches, v},
                                            static_cast<int>(p.gpt.layers)));
        const std::string why = plan::validatePipe(k, shape, static_cast<int>(p.gpt.layers));
        if (!why.empty()) {
            if (onlyOne) throwInvalid(why);
            if (firstProblem.empty()) firstProblem = why;
            p.notes.push_back(std::string(t.flag) + " left out: " + why);
            continue;
        }
        std::vector<theory::PipeStageActivations> held;
        try {
            held = theory::pipeActivations(k, shape, p.gpt,
                                           {p.microBatch, s.activations.checkpointing});
        } catch (const Error& e) {
            throwInvalid("--micro-batches " + std::to_string(p.microBatches) + " × --micro-batch " +
                         std::to_string(p.microBatch) + " (" + std::string(t.flag) +
                         "): " + e.what());
        }
        p.schedules.push_back(
            {k, shape.virtualStages, theory::pipeBubble(k, shape, {1, 1, 1}), std::move(held)});
    }
    if (p.schedules.empty()) throwInvalid(firstProblem); // none runs: the first one's reason
    for (const PipelineSchedule& one : p.schedules)
        if (plan::traits(one.kind).splitBackward)
            p.notes.push_back(std::string(plan::traits(one.kind).flag) +
                              ": between a micro-batch's B and its W a stage keeps W's inputs "
                              "(in its activations) and each linear layer's output gradient, "
                              "fp32 workspace (\"+ … for W\", at most at once)");
    // The stage list shows the one schedule's chunks when it has several a rank (interleaved).
    p.splitChunks = onlyOne ? p.schedules.front().virtualStages : 1;
    p.split = theory::pipeStages(p.gpt, {p.stages, p.microBatches, p.splitChunks});
    for (std::size_t i = 1; i < p.split.size(); ++i)
        if (p.split[i].params > p.split[static_cast<std::size_t>(p.rowsStage)].params)
            p.rowsStage = static_cast<int>(i);
    if (p.stages == 1) return p; // one stage is the whole model: the rows stay the model's
    const theory::PipeStage& rows = p.split[static_cast<std::size_t>(p.rowsStage)];
    p.rowsNote = "the rows are stage " + std::to_string(p.rowsStage) +
                 "'s model states over its D = " + std::to_string(p.dataRanks) +
                 " data-parallel ranks and their collectives once per step; the stage's TP "
                 "all-reduces and activations are not in them; its activations are below";
    p.notes.push_back("beside a pipeline ZeRO-2 reduce-scatters gradients and ZeRO-3 and FSDP "
                      "gather parameters once per micro-batch: M = " +
                      std::to_string(p.microBatches) +
                      " times those collectives' figures in the rows (DeepSpeed allows only ZeRO-1 "
                      "with pipelines)");
    s.shape.reset();
    s.units = rows.units;
    s.params = rows.params;
    s.ranks = p.dataRanks;
    return p;
}

nlohmann::json pipelineJson(const PipelineEstimate& p) {
    nlohmann::json stages = nlohmann::json::array(), schedules = nlohmann::json::array();
    for (std::size_t i = 0; i < p.split.size(); ++i) {
        const theory::PipeStage& st = p.split[i];
        nlohmann::json layers = nlohmann::json::array();
        for (const auto& [lo, hi] : st.layers)
            layers.push_back({{"first", lo}, {"end", hi}});
        stages.push_back({{"stage", i},
                          {"layers", layers},
                          {"embedding", st.embedding},
                          {"head", st.head},
                          {"params", st.params}});
    }
    for (const PipelineSchedule& s : p.schedules) {
        nlohmann::json per = nlohmann::json::array();
        for (const auto& a : s.stages)
            per.push_back({{"held_micro_batch_chunks", a.heldChunks},
                           {"activation_bytes", a.peakBytes},
                           {"per_micro_batch_bytes", a.perMicroBatchBytes},
                           {"kept_gradient_bytes", a.keptGradientBytes}});
        schedules.push_back({{"schedule", plan::traits(s.kind).flag},
                             {"virtual_stages", s.virtualStages},
                             {"bubble", s.bubble},
                             {"stages", per}});
    }
    return {{"stages", p.stages},
            {"tp", p.gpt.tp},
            {"rows_note", p.rowsNote},
            {"dp", p.dataRanks},
            {"micro_batches", p.microBatches},
            {"micro_batch", p.microBatch},
            {"rows_stage", p.rowsStage},
            {"stage_list", stages},
            {"schedules", schedules},
            {"notes", p.notes}};
}

void printPipeline(const PipelineEstimate& p) {
    std::printf(
        "\npipeline P = %d × T = %lld × D = %d = %lld ranks (pipeline outermost, then data, "
        "tensor innermost); M = %d micro-batches of %lld per data-parallel rank and step\n",
        p.stages, static_cast<long long>(p.gpt.tp), p.dataRanks,
        static_cast<long long>(p.stages) * p.gpt.tp * p.dataRanks, p.microBatches,
        static_cast<long long>(p.microBatch));
    if (!p.rowsNote.empty()) std::printf("(%s)\n", p.rowsNote.c_str());
    std::printf("%-6s %-28s %s\n", "stage",
                p.splitChunks > 1
                    ? ("layers (" + std::to_string(p.splitChunks) + " chunks per rank)").c_str()
                    : "layers (one chunk per rank)",
                "params");
    for (std::size_t i = 0; i < p.split.size(); ++i)
        std::printf("%-6zu %-28s %llu%s\n", i, layersText(p.split[i]).c_str(),
                    static_cast<unsigned long long>(p.split[i].params),
                    static_cast<int>(i) == p.rowsStage ? "  (the rows above: this stage's units)"
                                                       : "");
    std::printf("%-12s %-19s %s\n", "schedule", "bubble (theory)",
                "activations held at the peak, per stage (micro-batch chunks, bytes)");
    for (const PipelineSchedule& s : p.schedules) {
        char percent[32];
        std::snprintf(percent, sizeof percent, "%.1f %%", s.bubble * 100.0);
        std::string bubble = percent;
        if (s.virtualStages > 1) bubble += " (V = " + std::to_string(s.virtualStages) + ")";
        if (plan::traits(s.kind).splitBackward) bubble += " (F = B = W)";
        std::string held;
        for (const auto& a : s.stages)
            held += (held.empty() ? "" : " | ") + std::to_string(a.heldChunks) + ", " +
                    humanBytes(a.peakBytes) +
                    (a.keptGradientBytes > 0 ? " + " + humanBytes(a.keptGradientBytes) + " for W"
                                             : std::string());
        std::printf("%-12s %-19s %s\n", std::string(plan::traits(s.kind).flag).c_str(),
                    bubble.c_str(), held.c_str());
    }
    for (const std::string& n : p.notes)
        std::printf("  note: %s\n", n.c_str());
}

} // namespace shardscope::cli
