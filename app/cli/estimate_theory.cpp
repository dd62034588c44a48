// estimate --params P --ranks N: one row per strategy from the theory engine; with a model
// shape the predicted peak is the worker's dry run of the step (dryRunPeaks).
#include "core/error.h"
#include "estimate_common.h"
#include "estimate_pipeline.h"
#include "theory/estimate.h"

#include <cstdio>
#include <nlohmann/json.hpp>
#include <vector>

namespace shardscope::cli {

namespace {

using namespace theory;

constexpr std::int64_t kMaxRanks = std::int64_t{1} << 30;

struct Row {
    Scenario scenario;
    ModelStates states;
    CommPerStep comm;
    PeakPrediction peak;
};

std::vector<plan::Strategy> strategiesFlag(const Args& args) {
    const std::string text = args.value("--strategy").value_or("all");
    std::vector<plan::Strategy> out;
    forEachListed("--strategy", text,
                  "ddp, zero1, zero2, zero3, fsdp, fsdp_grad_op, fsdp_hybrid, all",
                  [&](const std::string& name) {
                      if (name == "all") {
                          for (plan::Strategy s : plan::classicStrategies())
                              out.push_back(s);
                          if (args.has("--hybrid-group"))
                              out.push_back(plan::Strategy::FsdpHybridShard);
                      } else if (auto s = plan::parseStrategy(name)) {
                          out.push_back(*s);
                      } else {
                          return false;
                      }
                      return true;
                  });
    return out;
}

plan::Precision precisionFlag(const Args& args) {
    plan::Precision p;
    if (auto text = args.value("--precision")) {
        auto kind = plan::parsePrecision(*text);
        if (!kind)
            throwInvalid("--precision expects bf16, fp16, fp32 or custom, got '" + *text + "'");
        p.kind = *kind;
    } else if (args.has("--optimizer-bytes")) {
        p.kind = plan::PrecisionKind::Custom; // K alone implies custom
    }
    if (args.has("--optimizer-bytes")) {
        if (p.kind != plan::PrecisionKind::Custom)
            throwInvalid("--optimizer-bytes needs --precision custom, got --precision " +
                         std::string(plan::precisionName(p.kind)));
        p.customOptimizerBytes =
            static_cast<std::uint32_t>(args.integer("--optimizer-bytes", 0, 64));
    }
    return p;
}

Scenario baseScenario(const Args& args, const EstimateFiles& files,
                      std::optional<PipelineEstimate>& pipeline) {
    rejectFlags(args, {"--largest-layer", "--gpus-per-node", "--nodes"},
                "applies only with --deepspeed");
    Scenario s;
    s.shape = modelShapeFlag(args);
    if (s.shape && args.has("--params"))
        throwInvalid("--params and --model-shape exclude each other");
    if (files.model) {
        // The model's own units: the gathered-unit term of the peak uses their real sizes.
        if (s.shape || args.has("--params"))
            throwInvalid("--model-config gives the model: drop --params / --model-shape");
        s.params = files.model->params;
        s.units = files.model->units;
    } else if (!s.shape)
        s.params = args.count("--params");
    s.ranks = static_cast<int>(args.integer("--ranks", 1, kMaxRanks));
    s.precision = precisionFlag(args);
    s.offload.optimizer = tierFlag(args, "--offload-optimizer");
    s.offload.param = tierFlag(args, "--offload-param");
    if (args.has("--hybrid-group")) {
        s.knobs.hybridGroupSize = static_cast<int>(args.integer("--hybrid-group", 1, kMaxRanks));
        if (s.ranks % s.knobs.hybridGroupSize != 0)
            throwInvalid("--hybrid-group " + std::to_string(s.knobs.hybridGroupSize) +
                         " does not divide --ranks " + std::to_string(s.ranks));
    }
    if (args.has("--micro-batch"))
        s.activations.microBatch = args.integer("--micro-batch", 1, 1 << 20);
    if (args.has("--tp")) {
        // A T × D mesh of --ranks: the theory's ranks are the DP group's, its shape one TP slice.
        const auto t = static_cast<int>(args.integer("--tp", 1, kMaxRanks));
        if (!s.shape)
            throwInvalid(
                "--tp needs --model-shape (tensor parallelism splits the heads and the MLP)");
        if (s.ranks % t != 0)
            throwInvalid("--tp " + std::to_string(t) + " does not divide --ranks " +
                         std::to_string(s.ranks));
        s.shape->tp = t;
        s.ranks /= t;
        if (s.knobs.hybridGroupSize > 0 && s.ranks % s.knobs.hybridGroupSize != 0)
            throwInvalid("--hybrid-group " + std::to_string(s.knobs.hybridGroupSize) +
                         " does not divide the " + std::to_string(s.ranks) +
                         " data-parallel ranks (--ranks / --tp)");
    }
    pipeline = pipelineFlags(args, s);
    return s;
}

// Everything is computed (and validated) before anything is printed: errors leave stdout empty.
std::vector<Row> computeRows(const Args& args, const EstimateFiles& files,
                             std::optional<PipelineEstimate>& pipeline) {
    const Scenario base = baseScenario(args, files, pipeline);
    std::vector<Row> rows;
    for (plan::Strategy st : strategiesFlag(args)) {
        Scenario s = base;
        s.strategy = st;
        validate(s);
        rows.push_back({s, modelStates(s), commPerStep(s), {}});
    }
    if (base.shape) {
        std::vector<Scenario> scenarios;
        for (const Row& r : rows)
            scenarios.push_back(r.scenario);
        std::vector<PeakPrediction> peaks = dryRunPeaks(scenarios);
        for (std::size_t i = 0; i < rows.size(); ++i)
            rows[i].peak = std::move(peaks[i]);
    } else {
        for (Row& r : rows)
            r.peak = closedFormPeak(r.scenario);
    }
    return rows;
}

nlohmann::json rowJson(const Row& r) {
    const ByteTable& t = r.states.perRank;
    nlohmann::json byCategory = nlohmann::json::object(), byTier = nlohmann::json::object();
    for (Category c : kAllCategories)
        byCategory[std::string(categoryName(c))] = t.category(c);
    for (Tier tier : kAllTiers)
        byTier[std::string(tierName(tier))] = t.tier(tier);
    nlohmann::json derivation = nlohmann::json::array();
    for (const auto& l : r.states.lines)
        derivation.push_back({{"category", categoryName(l.category)},
                              {"tier", tierName(l.tier)},
                              {"bytes", l.bytes},
                              {"formula", l.formula},
                              {"source", l.source}});
    nlohmann::json comm = nlohmann::json::object(), collectives = nlohmann::json::array();
    for (const auto& v : r.comm.byKind) {
        comm[std::string(collectiveOpName(v.kind))] = v.sentBytes;
        collectives.push_back({{"kind", collectiveOpName(v.kind)},
                               {"payload_bytes", v.payloadBytes},
                               {"sent_bytes", v.sentBytes},
                               {"calls", v.calls}});
    }
    comm["total"] = r.comm.totalSentBytes;
    return {{"strategy", plan::strategyName(r.scenario.strategy)},
            {"per_rank_bytes",
             {{"param", t.group(StateGroup::Param)},
              {"grad", t.group(StateGroup::Grad)},
              {"optimizer", t.group(StateGroup::Optimizer)},
              {"total", t.total()}}},
            {"by_category", byCategory},
            {"by_tier", byTier},
            {"shard_count", r.states.shardCount},
            {"padding_bytes", r.states.paddingBytes},
            {"derivation", derivation},
            {"comm_bytes_per_step", comm},
            {"collectives", collectives},
            {"comm_psi_equivalents", r.comm.psiEquivalents},
            {"predicted_peak_bytes", r.peak.peakBytes},
            {"peak_notes", r.peak.notes}};
}

void printJson(const std::vector<Row>& rows, const EstimateFiles& files,
               const std::optional<PipelineEstimate>& pipeline) {
    const Scenario& s = rows.front().scenario;
    nlohmann::json out = {{"params", rows.front().states.paramCount},
                          {"ranks", s.ranks},
                          {"precision", plan::precisionName(s.precision.kind)},
                          {"rows", nlohmann::json::array()}};
    // With --pp the rows' scenario has the stage's units instead of the shape: the shape given.
    const plan::GptShape* shape = s.shape ? &*s.shape : pipeline ? &pipeline->gpt : nullptr;
    if (shape)
        out["model_shape"] = {{"layers", shape->layers},
                              {"d_model", shape->dModel},
                              {"heads", shape->heads},
                              {"vocab", shape->vocab},
                              {"seq_len", shape->seqLen}};
    // With --tp: "params" and the per-rank rows are one TP slice's, "ranks" the DP group's.
    if (shape && shape->tp > 1) {
        out["tp"] = shape->tp;
        out["model_params"] = plan::modelParamCount(*shape);
    }
    if (const auto& m = files.model) {
        out["largest_layer_params"] = m->largestLayerParams;
        nlohmann::json units = nlohmann::json::array();
        for (const plan::UnitParams& u : m->units)
            units.push_back({{"name", u.name}, {"params", u.params}});
        out["model_config"] = {{"model_type", m->modelType},
                               {"layers", m->layers},
                               {"hidden_size", m->hidden},
                               {"heads", m->heads},
                               {"kv_heads", m->kvHeads},
                               {"head_dim", m->headDim},
                               {"intermediate_size", m->intermediate},
                               {"vocab", m->vocab},
                               {"tie_word_embeddings", m->tiedEmbeddings},
                               {"largest_layer", m->largestLayer},
                               {"units", units}};
    }
    if (files.imported)
        out["config_import"] =
            config_import::toJson(files.imported->imported, files.imported->source);
    for (const Row& r : rows)
        out["rows"].push_back(rowJson(r));
    // With --pp: "params" and the rows are the rows_stage's units over the data-parallel ranks.
    if (pipeline) out["pipeline"] = pipelineJson(*pipeline);
    std::printf("%s\n", out.dump(2).c_str());
}

void printDerivation(const Row& r) {
    std::printf("\nderivation (%s):\n",
                std::string(plan::strategyName(r.scenario.strategy)).c_str());
    for (const auto& l : r.states.lines)
        std::printf("  %-12s %-7s %-24s = %s\n               source: %s\n",
                    std::string(categoryName(l.category)).c_str(),
                    std::string(tierName(l.tier)).c_str(), humanBytes(l.bytes).c_str(),
                    l.formula.c_str(), l.source.c_str());
    std::printf("\ncommunication per rank per step (ring; ≈ %.2f × Ψ·param bytes):\n",
                r.comm.psiEquivalents);
    for (const auto& v : r.comm.byKind)
        std::printf("  %-14s %4d call(s), buffer %s, sent %s\n",
                    std::string(collectiveOpName(v.kind)).c_str(), v.calls,
                    humanBytes(v.payloadBytes).c_str(), humanBytes(v.sentBytes).c_str());
    std::printf("\npredicted peak (device): %s", humanBytes(r.peak.peakBytes).c_str());
    std::printf("  = states %s + activations %s + gathered %s + full grads %s + buckets %s\n",
                humanBytes(r.peak.modelStates.tier(Tier::Device)).c_str(),
                humanBytes(r.peak.activationBytes).c_str(),
                humanBytes(r.peak.gatheredBytes).c_str(), humanBytes(r.peak.gradFullBytes).c_str(),
                humanBytes(r.peak.bucketBytes).c_str());
    for (const auto& note : r.peak.notes)
        std::printf("  note: %s\n", note.c_str());
}

void printTable(const std::vector<Row>& rows, const EstimateFiles& files,
                const std::optional<PipelineEstimate>& pipeline) {
    const Scenario& s = rows.front().scenario;
    if (files.imported) printImport(*files.imported);
    if (const auto& m = files.model)
        std::printf("model %s: %lld layers, hidden %lld, %lld heads (%lld key/value, head_dim "
                    "%lld), intermediate %lld, "
                    "vocab %lld%s; %llu params, largest layer %s = %llu params\n",
                    m->modelType.c_str(), static_cast<long long>(m->layers),
                    static_cast<long long>(m->hidden), static_cast<long long>(m->heads),
                    static_cast<long long>(m->kvHeads), static_cast<long long>(m->headDim),
                    static_cast<long long>(m->intermediate), static_cast<long long>(m->vocab),
                    m->tiedEmbeddings ? ", tied embeddings" : "",
                    static_cast<unsigned long long>(m->params), m->largestLayer.c_str(),
                    static_cast<unsigned long long>(m->largestLayerParams));
    const plan::Precision& p = s.precision;
    std::printf("Ψ = %llu params, N = %d ranks, %s (%u+%u+%u B/param)%s\n",
                static_cast<unsigned long long>(rows.front().states.paramCount), s.ranks,
                std::string(plan::precisionName(p.kind)).c_str(), p.paramBytes(), p.gradBytes(),
                p.optimizerBytes(),
                s.shape || !s.units.empty() ? ", units padded to a multiple of the shard count"
                                            : "");
    if (s.shape && s.shape->tp > 1)
        std::printf(
            "tensor parallel T = %lld: Ψ is one TP rank's slice of %llu, N the data-parallel ranks "
            "(D = --ranks / T); the TP all-reduces are in the comm column\n",
            static_cast<long long>(s.shape->tp),
            static_cast<unsigned long long>(plan::modelParamCount(*s.shape)));
    std::printf("per-rank model states (GB = 1e9 B, GiB = 2^30 B)\n");
    std::printf("%-13s %-24s %-24s %-24s %-24s %s\n", "strategy", "param", "grad", "optimizer",
                "total", "comm sent/step");
    for (const Row& r : rows) {
        const ByteTable& t = r.states.perRank;
        std::printf("%-13s %-24s %-24s %-24s %-24s %s\n",
                    std::string(plan::strategyName(r.scenario.strategy)).c_str(),
                    humanBytes(t.group(StateGroup::Param)).c_str(),
                    humanBytes(t.group(StateGroup::Grad)).c_str(),
                    humanBytes(t.group(StateGroup::Optimizer)).c_str(),
                    humanBytes(t.total()).c_str(), humanBytes(r.comm.totalSentBytes).c_str());
    }
    if (rows.size() == 1)
        printDerivation(rows.front());
    else
        std::printf(
            "(--strategy S shows the derivation, communication and peak of one strategy)\n");
    if (pipeline) printPipeline(*pipeline);
}

} // namespace

int estimateTheory(const Args& args, const EstimateFiles& files) {
    std::optional<PipelineEstimate> pipeline;
    const std::vector<Row> rows = computeRows(args, files, pipeline);
    if (args.has("--json"))
        printJson(rows, files, pipeline);
    else
        printTable(rows, files, pipeline);
    return 0;
}

} // namespace shardscope::cli
