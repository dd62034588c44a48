#include "report/report.h"

#include "plan/pipeline.h"

#include <algorithm>
#include <cmath>

namespace shardscope::report {

namespace {

using nlohmann::json;

// Bounds a reader enforces before it allocates or indexes anything.
constexpr std::int64_t kMaxWorldSize = 1 << 20;
constexpr std::size_t kMaxSteps = 1'000'000; // values in one per-step array
constexpr std::size_t kMaxText = 4096;       // one string value
constexpr std::size_t kMaxNotes = kMaxReportNotes;
constexpr std::size_t kMaxKinds = 16; // collective kinds in one table
constexpr std::size_t kMaxKindName = 32;

// Thrown inside the reader only; fromJson turns it into Parsed::error.
struct Bad {
    std::string message;
};

// A JSON object read key by key; every failure names the key's path.
class Reader {
public:
    Reader(const json& j, std::string path) : j_(j), path_(std::move(path)) {
        if (!j_.is_object()) throw Bad{where() + "is not a JSON object"};
    }

    std::string where(const std::string& key = {}) const {
        const std::string p = key.empty() ? path_ : (path_.empty() ? key : path_ + "." + key);
        return p.empty() ? std::string() : p + ": ";
    }
    bool has(const char* key) const { return j_.contains(key); }
    const json& at(const char* key) const {
        const auto it = j_.find(key);
        if (it == j_.end())
            throw Bad{"report has no \"" + (path_.empty() ? std::string() : path_ + ".") + key +
                      "\""};
        return *it;
    }
    Reader object(const char* key) const {
        return Reader(at(key), path_.empty() ? key : path_ + "." + key);
    }

    std::uint64_t u64(const char* key) const {
        const json& v = at(key);
        if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<std::int64_t>() >= 0))
            throw Bad{where(key) + "expected a non-negative integer"};
        return v.get<std::uint64_t>();
    }
    std::int64_t i64(const char* key, std::int64_t min, std::int64_t max) const {
        const json& v = at(key);
        if (!v.is_number_integer()) throw Bad{where(key) + "expected an integer"};
        if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(max))
            throw Bad{where(key) + "out of range"};
        const auto x = v.get<std::int64_t>();
        if (x < min || x > max)
            throw Bad{where(key) + std::to_string(x) + " is out of range (" + std::to_string(min) +
                      "–" + std::to_string(max) + ")"};
        return x;
    }
    double real(const char* key) const { return realOf(at(key), key); }
    // A share of a step: in [0, 1].
    double fraction(const char* key) const {
        const double x = real(key);
        if (!(x >= 0 && x <= 1))
            throw Bad{where(key) + std::to_string(x) + " is not a fraction in [0, 1]"};
        return x;
    }
    bool boolean(const char* key) const {
        const json& v = at(key);
        if (!v.is_boolean()) throw Bad{where(key) + "expected true or false"};
        return v.get<bool>();
    }
    std::string text(const char* key) const { return textOf(at(key), key); }
    std::vector<double> reals(const char* key, std::size_t maxCount) const {
        const json& v = at(key);
        if (!v.is_array()) throw Bad{where(key) + "expected an array"};
        if (v.size() > maxCount)
            throw Bad{where(key) + "has " + std::to_string(v.size()) + " values, more than " +
                      std::to_string(maxCount)};
        std::vector<double> out;
        out.reserve(v.size());
        for (const json& x : v)
            out.push_back(realOf(x, key));
        return out;
    }
    std::vector<std::string> texts(const char* key) const {
        const json& v = at(key);
        if (!v.is_array() || v.size() > kMaxNotes)
            throw Bad{where(key) + "expected an array of at most " + std::to_string(kMaxNotes) +
                      " strings"};
        std::vector<std::string> out;
        for (const json& x : v)
            out.push_back(textOf(x, key));
        return out;
    }
    // {"param_shard": …} over known categories; `total` receives "total" when given.
    CategoryBytes categories(const char* key, std::uint64_t* total = nullptr) const {
        const Reader r = object(key);
        CategoryBytes out{};
        for (const auto& [name, value] : r.j_.items()) {
            if (total && name == "total") {
                *total = r.u64("total");
                continue;
            }
            const auto c = parseCategory(name);
            if (!c)
                throw Bad{r.where() + "unknown category '" + name.substr(0, kMaxKindName) + "'"};
            out[index(*c)] = r.u64(name.c_str());
        }
        if (total && !r.has("total")) throw Bad{r.where() + "has no \"total\""};
        return out;
    }
    // {"device": {category…[, total]}, "host": …, "nvme": …}: every tier present, no other key.
    TierCategoryBytes tierCategories(const char* key, TierBytes* totals = nullptr) const {
        const Reader r = object(key);
        TierCategoryBytes out{};
        if (r.j_.size() != kTierCount)
            throw Bad{r.where() + "expected the tiers device, host and nvme"};
        for (Tier t : kAllTiers) {
            const std::string name(tierName(t));
            out[index(t)] = r.categories(name.c_str(), totals ? &(*totals)[index(t)] : nullptr);
        }
        return out;
    }
    TierBytes tiers(const char* key) const {
        const Reader r = object(key);
        TierBytes out{};
        if (r.j_.size() != kTierCount)
            throw Bad{r.where() + "expected the tiers device, host and nvme"};
        for (Tier t : kAllTiers)
            out[index(t)] = r.u64(std::string(tierName(t)).c_str());
        return out;
    }
    KindValues kinds(const char* key) const {
        const Reader r = object(key);
        if (r.j_.size() > kMaxKinds)
            throw Bad{r.where() + "has more than " + std::to_string(kMaxKinds) + " kinds"};
        KindValues out;
        for (const auto& [name, value] : r.j_.items()) {
            if (name.empty() || name.size() > kMaxKindName)
                throw Bad{r.where() + "a collective kind name is empty or too long"};
            const double v = r.realOf(value, name.c_str());
            if (v < 0) throw Bad{r.where(name) + "is negative"};
            out.emplace_back(name, v);
        }
        return out;
    }
    const json& raw() const { return j_; }

private:
    double realOf(const json& v, const char* key) const {
        if (!v.is_number()) throw Bad{where(key) + "expected a number"};
        const double x = v.get<double>();
        if (!std::isfinite(x)) throw Bad{where(key) + "is not finite"};
        return x;
    }
    std::string textOf(const json& v, const char* key) const {
        if (!v.is_string()) throw Bad{where(key) + "expected a string"};
        const auto& s = v.get_ref<const std::string&>();
        if (s.size() > kMaxText)
            throw Bad{where(key) + "is longer than " + std::to_string(kMaxText) + " bytes"};
        return s;
    }

    const json& j_;
    std::string path_;
};

void requireSchema(const json& j, std::string_view schema) {
    if (!j.is_object()) throw Bad{"the report is not a JSON object"};
    const auto it = j.find("schema");
    if (it == j.end()) throw Bad{std::string(kNoSchemaMessage)};
    if (!it->is_string() || it->get_ref<const std::string&>() != schema) {
        const std::string got =
            it->is_string() ? it->get<std::string>().substr(0, 64) : std::string("not a string");
        throw Bad{"report schema '" + got + "' is not " + std::string(schema) +
                  " (a newer or foreign file)"};
    }
}

// config_import's two lists of {key, <second>} pairs, each bounded like notes.
ConfigImport readConfigImport(const Reader& r) {
    ConfigImport out;
    out.source = r.text("source");
    auto pairs = [&](const char* list, const char* second) {
        const json& v = r.at(list);
        if (!v.is_array() || v.size() > kMaxNotes)
            throw Bad{r.where(list) + "expected an array of at most " + std::to_string(kMaxNotes) +
                      " entries"};
        std::vector<std::pair<std::string, std::string>> entries;
        for (std::size_t i = 0; i < v.size(); ++i) {
            const Reader e(v[i],
                           "config_import." + std::string(list) + "[" + std::to_string(i) + "]");
            entries.emplace_back(e.text("key"), e.text(second));
        }
        return entries;
    };
    out.applied = pairs("applied", "setting");
    out.ignored = pairs("ignored", "why");
    return out;
}

RunReport readRun(const json& j, const std::string& path) {
    requireSchema(j, kRunSchema);
    const Reader r(j, path);
    RunReport out;
    out.paramCount = r.u64("param_count");
    out.worldSize = static_cast<int>(r.i64("world_size", 1, kMaxWorldSize));
    out.strategy = r.text("strategy");
    out.model = r.text("model");
    out.precision = r.text("precision");
    out.checkpointing = r.boolean("checkpointing");
    out.microBatch = r.i64("micro_batch", 1, INT32_MAX);
    out.gradAccum = r.i64("grad_accum", 1, INT32_MAX);
    out.steps = r.i64("steps", 0, static_cast<std::int64_t>(kMaxSteps));
    out.seed = r.u64("seed");
    out.deterministic = r.boolean("deterministic");
    out.data = r.text("data");
    if (!r.at("config").is_object()) throw Bad{r.where("config") + "is not a JSON object"};
    out.config = r.at("config");
    out.losses = r.reals("losses", kMaxSteps);
    out.stepMs = r.reals("step_ms", kMaxSteps);

    const json& ranks = r.at("ranks");
    if (!ranks.is_array()) throw Bad{r.where("ranks") + "expected an array"};
    if (ranks.size() != static_cast<std::size_t>(out.worldSize))
        throw Bad{r.where("ranks") + "has " + std::to_string(ranks.size()) +
                  " entries for world_size " + std::to_string(out.worldSize)};
    std::vector<bool> seen(static_cast<std::size_t>(out.worldSize), false);
    out.ranks.resize(ranks.size());
    for (std::size_t i = 0; i < ranks.size(); ++i) {
        const Reader rk(ranks[i],
                        (path.empty() ? "" : path + ".") + "ranks[" + std::to_string(i) + "]");
        const auto rank = static_cast<std::size_t>(rk.i64("rank", 0, out.worldSize - 1));
        if (seen[rank])
            throw Bad{rk.where("rank") + "rank " + std::to_string(rank) + " appears twice"};
        seen[rank] = true;
        RankReport& rr = out.ranks[rank];
        rr.rank = static_cast<int>(rank);
        rr.peakBytes = rk.categories("peak_bytes", &rr.peakTotal);
        rr.modelStateBytes = rk.categories("model_state_bytes");
        // Reports written before tiers were measured have no split: everything was on the device.
        if (rk.has("model_state_bytes_by_tier")) {
            rr.modelStateBytesByTier = rk.tierCategories("model_state_bytes_by_tier");
            rr.peakBytesByTier = rk.tierCategories("peak_bytes_by_tier", &rr.peakTotalByTier);
        } else {
            rr.modelStateBytesByTier[index(Tier::Device)] = rr.modelStateBytes;
            rr.peakBytesByTier[index(Tier::Device)] = rr.peakBytes;
            rr.peakTotalByTier[index(Tier::Device)] = rr.peakTotal;
        }
        rr.commBytesPerStep = rk.kinds("comm_bytes_per_step");
        const Reader ex = rk.object("exposed_comm");
        rr.exposedComm.fractionMedian = ex.fraction("fraction_median");
        rr.exposedComm.fractionPerStep = ex.reals("fraction_per_step", kMaxSteps);
        rr.exposedComm.commUnionNs = ex.u64("comm_union_ns");
        rr.exposedComm.exposedNs = ex.u64("exposed_ns");
        rr.exposedComm.stepNs = ex.u64("step_ns");
        if (rk.has("exposed_transfer")) {
            const Reader xt = rk.object("exposed_transfer");
            rr.exposedTransfer.fractionMedian = xt.fraction("fraction_median");
            rr.exposedTransfer.fractionPerStep = xt.reals("fraction_per_step", kMaxSteps);
            rr.exposedTransfer.transferUnionNs = xt.u64("transfer_union_ns");
            rr.exposedTransfer.exposedNs = xt.u64("exposed_ns");
        }
        if (rk.has("checkpoint_bytes_read"))
            rr.checkpointBytesRead = rk.u64("checkpoint_bytes_read");
        if (rk.has("device")) {
            const Reader d = rk.object("device");
            DeviceMemory m;
            m.name = d.text("name");
            m.ordinal = static_cast<std::int32_t>(d.i64("ordinal", 0, INT32_MAX));
            m.ledgerPeakBytes = d.u64("ledger_peak_bytes");
            m.poolUsedBytes = d.u64("pool_used_bytes");
            m.poolUsedHighBytes = d.u64("pool_used_high_bytes");
            m.poolReservedBytes = d.u64("pool_reserved_bytes");
            m.poolReservedHighBytes = d.u64("pool_reserved_high_bytes");
            m.deviceTotalBytes = d.u64("device_total_bytes");
            m.deviceUsedBytes = d.u64("device_used_bytes");
            m.outsideLedgerBytes = d.u64("outside_ledger_bytes");
            m.declaredWorkspaceBytes = d.u64("declared_workspace_bytes");
            rr.device = std::move(m);
        }
    }
    out.commBytesPerStep = r.kinds("comm_bytes_per_step");
    out.commPayloadBytesPerStep = r.kinds("comm_payload_bytes_per_step");
    out.commCallsPerStep = r.kinds("comm_calls_per_step");
    out.exposedCommFraction = r.fraction("exposed_comm_fraction");
    if (r.has("exposed_transfer_fraction"))
        out.exposedTransferFraction = r.fraction("exposed_transfer_fraction");

    const Reader t = r.object("theory");
    TheoryValues& th = out.theory;
    th.modelStateBytes = t.categories("model_state_bytes");
    th.ddpModelStateBytes = t.categories("ddp_model_state_bytes");
    th.paddingBytes = t.u64("padding_bytes");
    if (t.has("model_state_bytes_by_tier")) {
        th.modelStateBytesByTier = t.tierCategories("model_state_bytes_by_tier");
        th.peakBytesByTier = t.tiers("peak_bytes_by_tier");
    } else {
        th.modelStateBytesByTier[index(Tier::Device)] = th.modelStateBytes;
        th.peakBytesByTier[index(Tier::Device)] = t.u64("predicted_peak_bytes");
    }
    th.predictedPeakBytes = t.u64("predicted_peak_bytes");
    th.peakAt = t.categories("peak_at");
    th.peakByCategory = t.categories("peak_by_category");
    th.peakPhase = t.text("peak_phase");
    th.activationPeakBytes = t.u64("activation_peak_bytes");
    th.commBytesPerStep = t.kinds("comm_bytes_per_step");
    th.commPayloadBytesPerStep = t.kinds("comm_payload_bytes_per_step");
    th.commCallsPerStep = t.kinds("comm_calls_per_step");
    th.psiEquivalents = t.real("psi_equivalents");
    th.notes = t.texts("notes");
    if (t.has("stages")) {
        // One per pipeline stage: at most the stages a run may have, each a unit range.
        const json& stages = t.at("stages");
        if (!stages.is_array() || stages.size() < 2 ||
            stages.size() > static_cast<std::size_t>(plan::kMaxPipeStages) ||
            stages.size() > static_cast<std::size_t>(out.worldSize))
            throw Bad{"report: theory.stages: expected an array of 2 to " +
                      std::to_string(plan::kMaxPipeStages) + " stages, at most world_size"};
        const auto pp = out.config.find("pp");
        if (pp == out.config.end() || !pp->is_number_integer() ||
            pp->get<std::int64_t>() != static_cast<std::int64_t>(stages.size()))
            throw Bad{"report: theory.stages: " + std::to_string(stages.size()) +
                      " stages, but the configuration's pp is not that"};
        // With V virtual stages each stage lists its V chunks; the P·V chunks, in virtual-stage
        // order (chunk c of stage s is c·P + s), tile the model's units as the stages do without.
        std::int64_t perStage = 1; // chunks
        if (const auto vs = out.config.find("virtual_stages"); vs != out.config.end()) {
            if (!vs->is_number_integer() || vs->get<std::int64_t>() < 1 ||
                vs->get<std::int64_t>() > plan::kMaxVirtualStages)
                throw Bad{"report: config.virtual_stages: expected 1 to " +
                          std::to_string(plan::kMaxVirtualStages)};
            perStage = vs->get<std::int64_t>();
        }
        const auto p = static_cast<std::int64_t>(stages.size());
        std::vector<StageTheoryValues> stageValues;
        std::vector<std::pair<std::int32_t, std::int32_t>> tiles(
            static_cast<std::size_t>(p * perStage));
        for (std::size_t st = 0; st < stages.size(); ++st) {
            const Reader s(stages[st], "theory.stages");
            StageTheoryValues val;
            val.firstUnit = static_cast<std::int32_t>(s.i64("first_unit", 0, 1 << 20));
            val.endUnit = static_cast<std::int32_t>(s.i64("end_unit", val.firstUnit + 1, 1 << 20));
            if (perStage == 1) {
                tiles[st] = {val.firstUnit, val.endUnit};
            } else {
                const json& chunks =
                    stages[st].contains("chunks") ? stages[st].at("chunks") : json();
                if (!chunks.is_array() || static_cast<std::int64_t>(chunks.size()) != perStage)
                    throw Bad{"report: theory.stages: a stage of " + std::to_string(perStage) +
                              " virtual stages needs that many chunks"};
                for (std::int64_t c = 0; c < perStage; ++c) {
                    const json& pair = chunks[static_cast<std::size_t>(c)];
                    if (!pair.is_array() || pair.size() != 2 || !pair[0].is_number_integer() ||
                        !pair[1].is_number_integer() || pair[0].get<std::int64_t>() < 0 ||
                        pair[1].get<std::int64_t>() <= pair[0].get<std::int64_t>() ||
                        pair[1].get<std::int64_t>() > val.endUnit ||
                        pair[0].get<std::int64_t>() < val.firstUnit)
                        throw Bad{"report: theory.stages: a chunk is not a unit range [first, "
                                  "end) inside its stage's"};
                    const std::pair<std::int32_t, std::int32_t> range{
                        static_cast<std::int32_t>(pair[0].get<std::int64_t>()),
                        static_cast<std::int32_t>(pair[1].get<std::int64_t>())};
                    val.chunks.push_back(range);
                    tiles[static_cast<std::size_t>(c * p) + st] = range;
                }
                if (val.chunks.front().first != val.firstUnit ||
                    val.chunks.back().second != val.endUnit)
                    throw Bad{"report: theory.stages: a stage's chunks do not span its first_unit "
                              "to end_unit"};
            }
            stageValues.push_back(std::move(val));
        }
        std::int32_t next = 0;
        for (const auto& [first, end] : tiles) {
            if (first != next)
                throw Bad{"report: theory.stages: the stages' units are not consecutive at unit " +
                          std::to_string(first)};
            next = end;
        }
        for (std::size_t st = 0; st < stages.size(); ++st) {
            const Reader s(stages[st], "theory.stages");
            StageTheoryValues v = std::move(stageValues[st]);
            v.modelStateBytes = s.categories("model_state_bytes");
            v.ddpModelStateBytes = s.categories("ddp_model_state_bytes");
            v.predictedPeakBytes = s.u64("predicted_peak_bytes");
            v.commBytesPerStep = s.kinds("comm_bytes_per_step");
            th.stages.push_back(std::move(v));
        }
    }

    const Reader c = r.object("comparison");
    out.comparison.modelStatesEqual = c.boolean("model_states_equal");
    out.comparison.peakDeltaBytes = c.i64("peak_delta_bytes", INT64_MIN, INT64_MAX);
    out.comparison.peakDeltaFraction = c.real("peak_delta_fraction");
    out.comparison.commDeltaFraction = c.real("comm_delta_fraction");
    out.notes = r.texts("notes");
    out.paramDigest = r.text("param_digest");
    if (r.has("max_abs_delta_vs_ddp")) out.maxAbsDeltaVsDdp = r.real("max_abs_delta_vs_ddp");
    if (r.has("gemm")) {
        const Reader g = r.object("gemm");
        out.gemmEngine = g.text("engine");
        out.bf16Gemm = g.boolean("bf16_units");
    }
    if (r.has("resumed_from")) {
        const Reader f = r.object("resumed_from");
        out.resumedFrom =
            ResumedFrom{f.text("path"), f.i64("step", 0, INT64_MAX),
                        static_cast<int>(f.i64("world_size", 1, 1 << 20)), f.text("strategy")};
    }
    if (r.has("saves")) {
        const json& saves = r.at("saves");
        if (!saves.is_array() || saves.size() > kMaxSteps)
            throw Bad{"report: saves: expected an array of at most " + std::to_string(kMaxSteps)};
        for (const json& item : saves) {
            const Reader s(item, "saves");
            out.saves.push_back(
                {s.i64("step", 0, INT64_MAX), s.text("path"), s.real("seconds"), s.u64("bytes"),
                 s.has("seconds_blocked") ? s.real("seconds_blocked") : s.real("seconds")});
        }
    }
    if (r.has("config_import")) out.configImport = readConfigImport(r.object("config_import"));
    return out;
}

template <class T, class F> Parsed<T> guarded(F&& read) {
    try {
        return {read(), {}};
    } catch (const Bad& b) {
        return {std::nullopt, b.message};
    } catch (const std::exception& e) { // nlohmann or allocation: still one line
        return {std::nullopt, std::string("unreadable report: ") + e.what()};
    }
}

json parseText(std::string_view text) {
    json j = json::parse(text.begin(), text.end(), nullptr, false);
    if (j.is_discarded()) throw Bad{"the report is not valid JSON"};
    return j;
}

} // namespace

double total(const KindValues& values) {
    double sum = 0;
    for (const auto& [kind, v] : values)
        sum += v;
    return sum;
}

std::uint64_t stateTotal(const CategoryBytes& bytes) {
    std::uint64_t sum = 0;
    for (std::uint64_t b : bytes)
        sum += b;
    return sum;
}

const RankReport& RunReport::worstRank() const {
    static const RankReport none;
    if (ranks.empty()) return none;
    return *std::max_element(
        ranks.begin(), ranks.end(),
        [](const RankReport& a, const RankReport& b) { return a.peakTotal < b.peakTotal; });
}

namespace {
const StageTheoryValues* stageOf(const RunReport& r, int rank) {
    const auto stages = static_cast<int>(r.theory.stages.size());
    if (stages < 2 || r.worldSize < stages || r.worldSize % stages != 0) return nullptr;
    const int stage = std::clamp(rank / (r.worldSize / stages), 0, stages - 1);
    return &r.theory.stages[static_cast<std::size_t>(stage)];
}
} // namespace

const CategoryBytes& RunReport::theoryModelStatesOf(int rank) const {
    const StageTheoryValues* s = stageOf(*this, rank);
    return s ? s->modelStateBytes : theory.modelStateBytes;
}

std::uint64_t RunReport::predictedPeakOf(int rank) const {
    const StageTheoryValues* s = stageOf(*this, rank);
    return s ? s->predictedPeakBytes : theory.predictedPeakBytes;
}

std::uint64_t RunReport::peakMax() const {
    return worstRank().peakTotal;
}

json toJson(const ConfigImport& c) {
    json applied = json::array(), ignored = json::array();
    for (const auto& [key, setting] : c.applied)
        applied.push_back({{"key", key}, {"setting", setting}});
    for (const auto& [key, why] : c.ignored)
        ignored.push_back({{"key", key}, {"why", why}});
    return {{"source", c.source}, {"applied", applied}, {"ignored", ignored}};
}

Parsed<ConfigImport> parseConfigImport(std::string_view text) {
    return guarded<ConfigImport>(
        [&] { return readConfigImport(Reader(parseText(text), "config_import")); });
}

json toJson(const CompareReport& c) {
    json list = json::array();
    for (const RunReport& r : c.strategies)
        list.push_back(toJson(r));
    return {{"schema", std::string(kCompareSchema)},
            {"ranks", c.ranks},
            {"deterministic", c.deterministic},
            {"strategies", list}};
}

Parsed<RunReport> fromJson(const json& j) {
    return guarded<RunReport>([&] { return readRun(j, ""); });
}

Parsed<RunReport> parseRunReport(std::string_view text) {
    return guarded<RunReport>([&] { return readRun(parseText(text), ""); });
}

Parsed<CompareReport> compareFromJson(const json& j) {
    return guarded<CompareReport>([&] {
        CompareReport out;
        const auto schema = j.is_object() ? j.find("schema") : j.end();
        if (schema != j.end() && schema->is_string() &&
            schema->get_ref<const std::string&>() == kRunSchema) {
            out.strategies.push_back(readRun(j, ""));
            out.ranks = out.strategies.front().worldSize;
            out.deterministic = out.strategies.front().deterministic;
            return out;
        }
        requireSchema(j, kCompareSchema);
        const Reader r(j, "");
        out.ranks = static_cast<int>(r.i64("ranks", 1, kMaxWorldSize));
        out.deterministic = r.boolean("deterministic");
        const json& list = r.at("strategies");
        if (!list.is_array() || list.empty())
            throw Bad{"strategies: expected a non-empty array of run reports"};
        if (list.size() > 64) throw Bad{"strategies: more than 64 runs"};
        for (std::size_t i = 0; i < list.size(); ++i)
            out.strategies.push_back(readRun(list[i], "strategies[" + std::to_string(i) + "]"));
        return out;
    });
}

Parsed<CompareReport> parseCompareReport(std::string_view text) {
    try {
        return compareFromJson(parseText(text));
    } catch (const Bad& b) {
        return {std::nullopt, b.message};
    }
}

} // namespace shardscope::report
