#include "report/prediction.h"

#include <string>

namespace shardscope::report {

namespace {

using nlohmann::json;

struct Bad {
    std::string what;
};

const json& field(const json& j, const char* key) {
    if (!j.is_object()) throw Bad{std::string("expected an object holding '") + key + "'"};
    const auto it = j.find(key);
    if (it == j.end()) throw Bad{std::string("missing '") + key + "'"};
    return *it;
}

template <class T> T number(const json& j, const char* key) {
    const json& v = field(j, key);
    if (!v.is_number_integer()) throw Bad{std::string("'") + key + "' is not an integer"};
    return v.get<T>();
}

bool flag(const json& j, const char* key) {
    const json& v = field(j, key);
    if (!v.is_boolean()) throw Bad{std::string("'") + key + "' is not true or false"};
    return v.get<bool>();
}

std::string text(const json& j, const char* key) {
    const json& v = field(j, key);
    if (!v.is_string()) throw Bad{std::string("'") + key + "' is not a string"};
    return v.get<std::string>();
}

Tier tier(const json& j, const char* key) {
    const std::string name = text(j, key);
    const auto t = parseTier(name);
    if (!t) throw Bad{std::string("'") + key + "': unknown tier '" + name + "'"};
    return *t;
}

json tableJson(const ByteTable& t) {
    json out = json::object();
    for (Category c : kAllCategories) {
        json row = json::object();
        for (Tier tr : kAllTiers)
            row[std::string(tierName(tr))] = t.at(c, tr);
        out[std::string(categoryName(c))] = row;
    }
    return out;
}

ByteTable table(const json& j, const char* key) {
    const json& v = field(j, key);
    ByteTable t;
    for (Category c : kAllCategories) {
        const std::string name(categoryName(c));
        const json& row = field(v, name.c_str());
        for (Tier tr : kAllTiers)
            t.at(c, tr) = number<std::uint64_t>(row, std::string(tierName(tr)).c_str());
    }
    return t;
}

theory::Scenario scenario(const json& j) {
    theory::Scenario s;
    const json& shape = field(j, "shape");
    if (!shape.is_null())
        s.shape = plan::GptShape{
            number<std::int64_t>(shape, "layers"), number<std::int64_t>(shape, "d_model"),
            number<std::int64_t>(shape, "heads"), number<std::int64_t>(shape, "vocab"),
            number<std::int64_t>(shape, "seq_len")};
    // The TP degree (absent: 1); theory::validate checks it against the heads and the MLP width.
    if (s.shape && shape.contains("tp")) s.shape->tp = number<std::int64_t>(shape, "tp");
    s.params = number<std::uint64_t>(j, "params");
    const std::string strategy = text(j, "strategy");
    const auto st = plan::parseStrategy(strategy);
    if (!st) throw Bad{"unknown strategy '" + strategy + "'"};
    s.strategy = *st;
    s.ranks = number<int>(j, "ranks");
    const std::string precision = text(j, "precision");
    const auto kind = plan::parsePrecision(precision);
    if (!kind) throw Bad{"unknown precision '" + precision + "'"};
    s.precision.kind = *kind;
    s.precision.customOptimizerBytes = number<std::uint32_t>(j, "optimizer_bytes");
    s.offload.optimizer = tier(j, "offload_optimizer");
    s.offload.param = tier(j, "offload_param");
    const json& k = field(j, "knobs");
    s.knobs.reduceBucketBytes = number<std::uint64_t>(k, "reduce_bucket_bytes");
    s.knobs.allGatherBucketBytes = number<std::uint64_t>(k, "all_gather_bucket_bytes");
    s.knobs.prefetchDepth = number<int>(k, "prefetch_depth");
    s.knobs.reshardAfterForward = flag(k, "reshard_after_forward");
    s.knobs.maxInflightAllGathers = number<int>(k, "max_inflight_all_gathers");
    s.knobs.persistenceThresholdParams = number<std::uint64_t>(k, "persistence_threshold_params");
    s.knobs.hybridGroupSize = number<int>(k, "hybrid_group_size");
    s.knobs.gradAccumSteps = number<int>(k, "grad_accum_steps");
    s.knobs.noSync = flag(k, "no_sync");
    s.knobs.deterministicReductions = flag(k, "deterministic_reductions");
    s.knobs.sharedDeviceCollectives = flag(k, "shared_device_collectives");
    s.activations.microBatch = number<std::int64_t>(j, "micro_batch");
    s.activations.checkpointing = flag(j, "checkpointing");
    return s;
}

theory::PeakPrediction prediction(const json& j) {
    theory::PeakPrediction p;
    p.modelStates = table(j, "model_states");
    p.activationBytes = number<std::uint64_t>(j, "activation_bytes");
    p.gatheredBytes = number<std::uint64_t>(j, "gathered_bytes");
    p.gradFullBytes = number<std::uint64_t>(j, "grad_full_bytes");
    p.bucketBytes = number<std::uint64_t>(j, "bucket_bytes");
    p.workspaceBytes = number<std::uint64_t>(j, "workspace_bytes");
    p.paddingBytes = number<std::uint64_t>(j, "padding_bytes");
    p.peakBytes = number<std::uint64_t>(j, "peak_bytes");
    p.atPeak = table(j, "at_peak");
    p.categoryPeaks = table(j, "category_peaks");
    p.peakPhase = text(j, "peak_phase");
    const json& notes = field(j, "notes");
    if (!notes.is_array()) throw Bad{"'notes' is not an array"};
    for (const json& n : notes) {
        if (!n.is_string()) throw Bad{"'notes' holds a non-string"};
        p.notes.push_back(n.get<std::string>());
    }
    return p;
}

// The list under `key` of a {"schema": kPredictSchema, key: [...]} document, each item read by
// `item`.
template <class T, class F>
Parsed<std::vector<T>> readList(std::string_view textIn, const char* key, F item) {
    Parsed<std::vector<T>> out;
    try {
        const json j = json::parse(textIn);
        if (!j.is_object() || !j.contains("schema") || j["schema"] != kPredictSchema)
            throw Bad{"not a " + std::string(kPredictSchema) + " document"};
        const json& list = field(j, key);
        if (!list.is_array()) throw Bad{std::string("'") + key + "' is not an array"};
        std::vector<T> values;
        for (const json& v : list)
            values.push_back(item(v));
        out.value = std::move(values);
    } catch (const Bad& b) {
        out.error = b.what;
    } catch (const json::exception& e) {
        out.error = e.what();
    }
    return out;
}

} // namespace

json toJson(const theory::Scenario& s) {
    json shape = nullptr;
    if (s.shape)
        shape = {{"layers", s.shape->layers},  {"d_model", s.shape->dModel},
                 {"heads", s.shape->heads},    {"vocab", s.shape->vocab},
                 {"seq_len", s.shape->seqLen}, {"tp", s.shape->tp}};
    const plan::Knobs& k = s.knobs;
    return {{"shape", shape},
            {"params", s.params},
            {"strategy", plan::strategyName(s.strategy)},
            {"ranks", s.ranks},
            {"precision", plan::precisionName(s.precision.kind)},
            {"optimizer_bytes", s.precision.customOptimizerBytes},
            {"offload_optimizer", tierName(s.offload.optimizer)},
            {"offload_param", tierName(s.offload.param)},
            {"knobs",
             {{"reduce_bucket_bytes", k.reduceBucketBytes},
              {"all_gather_bucket_bytes", k.allGatherBucketBytes},
              {"prefetch_depth", k.prefetchDepth},
              {"reshard_after_forward", k.reshardAfterForward},
              {"max_inflight_all_gathers", k.maxInflightAllGathers},
              {"persistence_threshold_params", k.persistenceThresholdParams},
              {"hybrid_group_size", k.hybridGroupSize},
              {"grad_accum_steps", k.gradAccumSteps},
              {"no_sync", k.noSync},
              {"deterministic_reductions", k.deterministicReductions},
              {"shared_device_collectives", k.sharedDeviceCollectives}}},
            {"micro_batch", s.activations.microBatch},
            {"checkpointing", s.activations.checkpointing}};
}

json toJson(const theory::PeakPrediction& p) {
    return {{"model_states", tableJson(p.modelStates)},
            {"activation_bytes", p.activationBytes},
            {"gathered_bytes", p.gatheredBytes},
            {"grad_full_bytes", p.gradFullBytes},
            {"bucket_bytes", p.bucketBytes},
            {"workspace_bytes", p.workspaceBytes},
            {"padding_bytes", p.paddingBytes},
            {"peak_bytes", p.peakBytes},
            {"at_peak", tableJson(p.atPeak)},
            {"category_peaks", tableJson(p.categoryPeaks)},
            {"peak_phase", p.peakPhase},
            {"notes", p.notes}};
}

json predictRequestJson(const std::vector<theory::Scenario>& scenarios) {
    json list = json::array();
    for (const auto& s : scenarios)
        list.push_back(toJson(s));
    return {{"schema", kPredictSchema}, {"scenarios", list}};
}

Parsed<std::vector<theory::Scenario>> parsePredictRequest(std::string_view text) {
    return readList<theory::Scenario>(text, "scenarios", scenario);
}

json predictAnswerJson(const std::vector<theory::PeakPrediction>& predictions) {
    json list = json::array();
    for (const auto& p : predictions)
        list.push_back(toJson(p));
    return {{"schema", kPredictSchema}, {"predictions", list}};
}

Parsed<std::vector<theory::PeakPrediction>> parsePredictAnswer(std::string_view text) {
    return readList<theory::PeakPrediction>(text, "predictions", prediction);
}

} // namespace shardscope::report
