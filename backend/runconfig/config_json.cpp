#include "runconfig/config_json.h"

#include "core/error.h"
#include "plan/strategy.h"
#include "runconfig/problems.h"

#include <nlohmann/json.hpp>

namespace shardscope::runconfig {
namespace {

[[noreturn]] void refuse(const std::string& key, const std::string& why) {
    throw Error(ErrorKind::InvalidArgument, "configuration: \"" + key + "\" " + why);
}

const nlohmann::json* find(const nlohmann::json& j, const char* key) {
    const auto it = j.find(key);
    return it == j.end() || it->is_null() ? nullptr : &*it;
}

// An integer in [lo, hi], or the value `out` already holds (a default).
template <class T>
void readInt(const nlohmann::json& j, const char* key, std::int64_t lo, std::int64_t hi, T& out) {
    const nlohmann::json* v = find(j, key);
    if (!v) return;
    if (!v->is_number_integer()) refuse(key, "is not an integer");
    if (v->is_number_unsigned()) {
        const auto u = v->get<std::uint64_t>();
        if (u == static_cast<std::uint64_t>(out)) return;
        if (u > static_cast<std::uint64_t>(hi) || static_cast<std::int64_t>(u) < lo)
            refuse(key, "is out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
        out = static_cast<T>(u);
    } else {
        const auto s = v->get<std::int64_t>();
        if (s >= 0 && static_cast<std::uint64_t>(s) == static_cast<std::uint64_t>(out)) return;
        if (s < lo || s > hi)
            refuse(key, "is out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
        out = static_cast<T>(s);
    }
}

template <class T> void readLimited(const nlohmann::json& j, const char* key, Field field, T& out) {
    readInt(j, key, limitOf(field).min, limitOf(field).max, out);
}

void readBool(const nlohmann::json& j, const char* key, bool& out) {
    const nlohmann::json* v = find(j, key);
    if (!v) return;
    if (!v->is_boolean()) refuse(key, "is not true or false");
    out = v->get<bool>();
}

std::optional<std::string> readText(const nlohmann::json& j, const char* key) {
    const nlohmann::json* v = find(j, key);
    if (!v) return std::nullopt;
    if (!v->is_string()) refuse(key, "is not a string");
    return v->get<std::string>();
}

} // namespace

RunConfig configFromJson(const nlohmann::json& j) {
    if (!j.is_object()) throw Error(ErrorKind::InvalidArgument, "configuration: not a JSON object");
    RunConfig c;
    const auto model = readText(j, "model");
    if (!model) refuse("model", "is missing");
    const ModelPreset* preset = findPreset(*model);
    if (!preset) refuse("model", "names no preset (" + model->substr(0, 64) + ")");
    c.preset = *preset;
    const auto strategy = readText(j, "strategy");
    const auto parsed = strategy ? plan::parseStrategy(*strategy) : std::nullopt;
    if (!parsed) refuse("strategy", "names no strategy");
    c.strategy = *parsed;
    if (const auto precision = readText(j, "precision")) {
        const auto p = plan::parsePrecision(*precision);
        if (!p) refuse("precision", "names no precision");
        c.precision = *p;
    }
    if (const auto backend = readText(j, "backend")) {
        if (*backend == "cuda")
            c.backend = Backend::Cuda;
        else if (*backend != "cpu")
            refuse("backend", "is neither cpu nor cuda");
    }
    if (const auto data = readText(j, "data"); data && *data != "synthetic") {
        c.dataFile = *data;
        c.preset.shape.vocab = 256; // byte-level, as --data makes it
    }
    if (const auto resume = readText(j, "resume")) {
        if (resume->empty()) refuse("resume", "is empty");
        c.resumePath = *resume;
    }
    readLimited(j, "world_size", Field::Ranks, c.worldSize);
    // 0 steps: a conversion of the resumed checkpoint (--resume … --steps 0 --save NEW).
    readInt(j, "steps", c.resumePath ? 0 : limitOf(Field::Steps).min, limitOf(Field::Steps).max,
            c.steps);
    readLimited(j, "tp", Field::TensorParallel, c.tensorParallel);
    if (const nlohmann::json* lr = find(j, "learning_rate")) {
        if (!lr->is_number()) refuse("learning_rate", "is not a number");
        const double v = lr->get<double>();
        if (!(v > 0.0 && v <= kMaxLearningRate))
            refuse("learning_rate", "is out of range (0, " +
                                        std::to_string(static_cast<int>(kMaxLearningRate)) + "]");
        c.preset.learningRate = v;
    }
    if (const nlohmann::json* save = find(j, "save")) {
        if (!save->is_object()) refuse("save", "is not an object");
        const auto dir = readText(*save, "dir");
        if (!dir || dir->empty()) refuse("save.dir", "is missing or empty");
        c.saveDir = *dir;
        readInt(*save, "every", 0, kMaxSaveEvery, c.saveEvery);
        readBool(*save, "async", c.saveAsync);
    }
    readLimited(j, "seed", Field::Seed, c.seed);
    readLimited(j, "micro_batch", Field::MicroBatch, c.preset.microBatch);
    readLimited(j, "timeout_ms", Field::TimeoutMs, c.timeoutMs);
    readBool(j, "checkpointing", c.checkpointing);
    readBool(j, "deterministic", c.deterministic);
    readBool(j, "shared_device", c.sharedDevice);
    readBool(j, "events", c.events);
    if (find(j, "capacity_bytes")) {
        std::uint64_t capacity = 0;
        readInt(j, "capacity_bytes", 1, INT64_MAX, capacity);
        if (capacity == 0) refuse("capacity_bytes", "is 0");
        c.capacityBytes = capacity;
    }
    if (const nlohmann::json* offload = find(j, "offload")) {
        if (!offload->is_object()) refuse("offload", "is not an object");
        for (const auto& [key, tier] :
             {std::pair{"optimizer", &c.offload.optimizer}, std::pair{"param", &c.offload.param}}) {
            const auto name = readText(*offload, key);
            if (!name) continue;
            const auto t = parseTier(*name);
            if (!t) refuse(std::string("offload.") + key, "names no tier (device, host or nvme)");
            *tier = *t;
        }
        if (const auto dir = readText(*offload, "nvme_dir")) c.nvmeDir = *dir;
        readBool(*offload, "keep_nvme", c.keepNvme);
        readInt(*offload, "aio_block_bytes", 4096, std::int64_t{1} << 30, c.aioBlockBytes);
        readInt(*offload, "aio_queue_depth", 1, 1024, c.aioQueueDepth);
    }
    if (const nlohmann::json* knobs = find(j, "knobs")) {
        if (!knobs->is_object()) refuse("knobs", "is not an object");
        plan::Knobs& k = c.knobs;
        readLimited(*knobs, "reduce_bucket_bytes", Field::BucketBytes, k.reduceBucketBytes);
        readLimited(*knobs, "allgather_bucket_bytes", Field::BucketBytes, k.allGatherBucketBytes);
        readLimited(*knobs, "prefetch", Field::Prefetch, k.prefetchDepth);
        readBool(*knobs, "reshard_after_forward", k.reshardAfterForward);
        readLimited(*knobs, "max_inflight", Field::MaxInflight, k.maxInflightAllGathers);
        readLimited(*knobs, "persistence_threshold", Field::Persistence,
                    k.persistenceThresholdParams);
        readLimited(*knobs, "hybrid_group", Field::HybridGroup, k.hybridGroupSize);
        readLimited(*knobs, "grad_accum", Field::GradAccum, k.gradAccumSteps);
        readBool(*knobs, "no_sync", k.noSync);
    }
    return c;
}

} // namespace shardscope::runconfig
