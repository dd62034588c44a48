// Per-rank model states (estimate.h): which ledger category, which tier, how many bytes, and
// the formula with its source for each entry.
#include "theory/estimate.h"

#include "core/error.h"
#include "theory/input_error.h"
#include "theory/shard_plan.h"

#include <algorithm>
#include <sstream>

namespace shardscope::theory {

namespace detail {

std::uint64_t ShardPlan::shardBytes(std::uint64_t bytesPerElement, bool includePersistent) const {
    if (bare) {
        if (!includePersistent && units.front().persistent) return 0;
        const Uint128 total = static_cast<Uint128>(params) * bytesPerElement;
        return static_cast<std::uint64_t>((total + shards - 1) / shards);
    }
    std::uint64_t sum = 0;
    for (const auto& u : units)
        if (includePersistent || !u.persistent) sum += u.padded / shards * bytesPerElement;
    return sum;
}

std::uint64_t ShardPlan::fullBytes(std::uint64_t bytesPerElement, bool persistentOnly,
                                   bool includePersistent) const {
    std::uint64_t sum = 0;
    for (const auto& u : units) {
        if (persistentOnly && !u.persistent) continue;
        if (!includePersistent && u.persistent) continue;
        // A persistent unit is never gathered, so it needs no shard alignment.
        sum += (u.persistent ? u.params : u.padded) * bytesPerElement;
    }
    return sum;
}

std::uint64_t ShardPlan::paddedTotal() const {
    std::uint64_t sum = 0;
    for (const auto& u : units)
        sum += u.padded;
    return sum;
}

std::uint64_t ShardPlan::largestGatheredUnit() const {
    std::uint64_t largest = 0;
    for (const auto& u : units)
        if (!u.persistent) largest = std::max(largest, u.padded);
    return largest;
}

std::size_t ShardPlan::gatheredUnitCount() const {
    return static_cast<std::size_t>(
        std::count_if(units.begin(), units.end(), [](const PlanUnit& u) { return !u.persistent; }));
}

ShardPlan makePlan(const Scenario& s) {
    ShardPlan plan;
    plan.shards = static_cast<std::uint64_t>(shardCount(s));
    plan.bare = !s.shape.has_value() && s.units.empty();
    // DeepSpeed's param_persistence_threshold: only ZeRO-3 keeps small params whole.
    const std::uint64_t threshold = policyOf(s).persistenceThreshold;
    auto add = [&](std::string name, std::uint64_t params, int chunk = 0) {
        const bool persistent = threshold > 0 && params <= threshold;
        const std::uint64_t padded = plan.bare ? params : plan::paddedElements(params, plan.shards);
        plan.units.push_back({std::move(name), params, padded, persistent, chunk});
        plan.params += params;
    };
    if (plan.bare) {
        add("model", s.params);
    } else if (!s.shape) {
        for (const plan::UnitParams& u : s.units)
            add(u.name, u.params);
    } else {
        std::vector<plan::UnitParams> units = plan::unitParams(*s.shape);
        const std::vector<plan::StageUnits> chunks = s.stageChunks();
        for (std::size_t c = 0; c < chunks.size(); ++c)
            for (int u = chunks[c].first; u < chunks[c].end; ++u)
                add(std::move(units[static_cast<std::size_t>(u)].name),
                    units[static_cast<std::size_t>(u)].params, static_cast<int>(c));
    }
    return plan;
}

} // namespace detail

namespace {

using detail::ShardPlan;

constexpr std::uint64_t kMaxParams = std::uint64_t{1} << 53;         // exact in a double
constexpr std::uint64_t kMaxPaddedElements = std::uint64_t{1} << 56; // × ≤ 72 B still < 2^63
constexpr std::uint32_t kMaxOptimizerBytes = 64;

// ZeRO paper (Rajbhandari et al. 2020), sections per stage.
constexpr const char* kSrcBaseline =
    "ZeRO paper (Rajbhandari et al. 2020) §3.1, baseline DP (2+2+K)Ψ";
constexpr const char* kSrcPos = "ZeRO paper (Rajbhandari et al. 2020) §5.1, Pos";
constexpr const char* kSrcPosG = "ZeRO paper (Rajbhandari et al. 2020) §5.2, Pos+g";
constexpr const char* kSrcPosGP = "ZeRO paper (Rajbhandari et al. 2020) §5.3, Pos+g+p";
constexpr const char* kSrcFsdp = "PyTorch FSDP (Zhao et al. 2023) §3.2, FULL_SHARD flat parameter";
constexpr const char* kSrcGradOp = "PyTorch FSDP (Zhao et al. 2023) §3.2, SHARD_GRAD_OP";
constexpr const char* kSrcHybrid = "PyTorch FSDP (Zhao et al. 2023) §3.2.2, HYBRID_SHARD";
constexpr const char* kSrcPersist = "DeepSpeed ZeRO-3 param_persistence_threshold";
constexpr const char* kSrcOffload = "ZeRO-Offload (Ren et al. 2021) §4";
constexpr const char* kSrcInfinity = "ZeRO-Infinity (Rajbhandari et al. 2021) §5";

const char* strategySource(plan::Strategy s) {
    switch (s) {
    case plan::Strategy::Ddp:
        return kSrcBaseline;
    case plan::Strategy::Zero1:
        return kSrcPos;
    case plan::Strategy::Zero2:
        return kSrcPosG;
    case plan::Strategy::Zero3:
        return kSrcPosGP;
    case plan::Strategy::FsdpFullShard:
        return kSrcFsdp;
    case plan::Strategy::FsdpShardGradOp:
        return kSrcGradOp;
    case plan::Strategy::FsdpHybridShard:
        return kSrcHybrid;
    }
    return kSrcBaseline;
}

void check(bool ok, InputField field, const std::string& message) {
    if (!ok) throwInput(field, message);
}

void validateKnobs(const plan::Knobs& k) {
    check(k.reduceBucketBytes >= 1, InputField::Knobs,
          "reduce bucket size must be at least 1 byte");
    check(k.allGatherBucketBytes >= 1, InputField::Knobs,
          "all-gather bucket size must be at least 1 byte");
    check(k.prefetchDepth >= 0, InputField::Knobs,
          "prefetch depth must be ≥ 0, got " + std::to_string(k.prefetchDepth));
    check(k.maxInflightAllGathers >= 1, InputField::Knobs,
          "max in-flight all-gathers must be ≥ 1, got " + std::to_string(k.maxInflightAllGathers));
    check(k.gradAccumSteps >= 1, InputField::Knobs,
          "gradient accumulation steps must be ≥ 1, got " + std::to_string(k.gradAccumSteps));
}

// Activation tensors scale with B·T·max(4d, h·T, V) per block; bound that product (× 8 tensors
// × 4 B × (L + 2) units) so activationBreakdown never wraps.
void validateActivations(const Scenario& s) {
    check(s.activations.microBatch >= 1, InputField::MicroBatch,
          "micro-batch must be at least 1, got " + std::to_string(s.activations.microBatch));
    if (!s.shape) return;
    const plan::GptShape& g = *s.shape;
    const auto widest =
        static_cast<std::uint64_t>(std::max({4 * g.dModel, g.vocab, g.heads * g.seqLen}));
    std::uint64_t r = static_cast<std::uint64_t>(s.activations.microBatch);
    const bool overflow = __builtin_mul_overflow(r, static_cast<std::uint64_t>(g.seqLen), &r) ||
                          __builtin_mul_overflow(r, widest, &r) ||
                          __builtin_mul_overflow(r, std::uint64_t{32}, &r) ||
                          __builtin_mul_overflow(r, static_cast<std::uint64_t>(g.layers) + 2, &r);
    check(!overflow, InputField::MicroBatch,
          "micro-batch × model shape: activation bytes overflow 64 bits");
}

void validateSizes(const Scenario& s) {
    if (s.shape) {
        try {
            plan::validate(*s.shape);
        } catch (const Error& e) {
            throwInput(InputField::ModelShape, e.what());
        }
    } else {
        check(s.params >= 1, InputField::Params, "parameter count must be at least 1");
        check(s.params <= kMaxParams, InputField::Params,
              "parameter count " + std::to_string(s.params) + " is too large (at most 2^53)");
        check(s.units.size() <= 100'002, InputField::Params, "more than 100002 units");
        // 100002 units of up to 2^53 each can pass 2^64: a wrapped sum could equal a wrapped Ψ.
        std::uint64_t sum = 0;
        for (const plan::UnitParams& u : s.units) {
            check(u.params >= 1 && u.params <= kMaxParams, InputField::Params,
                  "unit " + u.name + " has no parameters or too many");
            sum += u.params;
            check(sum <= kMaxParams, InputField::Params,
                  "the units' parameters add up to more than 2^53");
        }
        check(s.units.empty() || sum == s.params, InputField::Params,
              "the units' parameters add up to " + std::to_string(sum) + ", not " +
                  std::to_string(s.params));
    }
    // Padding adds up to S−1 elements per unit: bound it before anything multiplies by bytes.
    // (With Ψ ≤ 2^53, ≤ 100002 units and S < 2^31 it cannot wrap; this keeps that explicit.)
    if (!s.shape) return;
    const auto shards = static_cast<std::uint64_t>(shardCount(s));
    const auto padOf = [shards](std::uint64_t params) {
        return (shards - params % shards) % shards;
    };
    const auto units = plan::unitParams(
        plan::GptShape{1, s.shape->dModel, s.shape->heads, s.shape->vocab, s.shape->seqLen});
    const std::uint64_t padding =
        padOf(units[0].params) + padOf(units[2].params) +
        static_cast<std::uint64_t>(s.shape->layers) * padOf(units[1].params);
    check(plan::paramCount(*s.shape) + padding <= kMaxPaddedElements, InputField::Ranks,
          "ranks × units: padded parameter count is too large");
}

} // namespace

int shardCount(const Scenario& s) {
    return detail::policyOf(s).shardCount(s.ranks);
}

std::vector<plan::StageUnits> Scenario::stageChunks() const {
    const int layers = shape ? static_cast<int>(shape->layers) : 0;
    if (pipeStages <= 1 || !shape) return {{0, layers + 2}};
    return plan::stageChunks(layers, pipeStages, virtualStages, pipeStage);
}

plan::StageUnits Scenario::stageUnits() const {
    const std::vector<plan::StageUnits> chunks = stageChunks();
    return {chunks.front().first, chunks.back().end};
}

void validate(const Scenario& s) {
    check(s.ranks >= 1, InputField::Ranks,
          "ranks must be at least 1, got " + std::to_string(s.ranks));
    if (s.pipeStages != 1 || s.pipeStage != 0) {
        check(s.shape.has_value(), InputField::ModelShape,
              "pipeline stages need a model shape (layers to split)");
        check(s.pipeStages >= 1 && s.pipeStages <= plan::kMaxPipeStages, InputField::Ranks,
              "pipeline stages must be 1 to " + std::to_string(plan::kMaxPipeStages) + ", got " +
                  std::to_string(s.pipeStages));
        check(s.virtualStages >= 1 && s.virtualStages <= plan::kMaxVirtualStages, InputField::Ranks,
              "virtual stages must be 1 to " + std::to_string(plan::kMaxVirtualStages) + ", got " +
                  std::to_string(s.virtualStages));
        check(s.shape->layers >= static_cast<std::int64_t>(s.pipeStages) * s.virtualStages,
              InputField::ModelShape,
              std::to_string(s.pipeStages * s.virtualStages) + " pipeline stages for a model of " +
                  std::to_string(s.shape->layers) + " layers: every stage needs a layer");
        check(s.pipeStage >= 0 && s.pipeStage < s.pipeStages, InputField::Ranks,
              "pipeline stage " + std::to_string(s.pipeStage) + " is not one of " +
                  std::to_string(s.pipeStages));
    }
    // With tensor parallelism `ranks` is the DP group; the world (ranks × T) is an int too.
    if (s.shape && s.shape->tp > 1)
        check(s.shape->tp <= (std::int64_t{1} << 30) / s.ranks, InputField::Ranks,
              "ranks × tensor parallel " + std::to_string(s.shape->tp) + " is too many ranks");
    if (s.precision.kind == plan::PrecisionKind::Custom)
        check(s.precision.customOptimizerBytes <= kMaxOptimizerBytes, InputField::OptimizerBytes,
              "optimizer bytes per parameter must be at most 64, got " +
                  std::to_string(s.precision.customOptimizerBytes));
    if (detail::policyOf(s).hybrid) {
        const int g = s.knobs.hybridGroupSize;
        check(g >= 1, InputField::HybridGroup,
              "fsdp_hybrid needs a shard group size of at least 1");
        check(s.ranks % g == 0, InputField::HybridGroup,
              "hybrid group size " + std::to_string(g) + " does not divide ranks " +
                  std::to_string(s.ranks));
    }
    if (s.offload.param != Tier::Device)
        check(detail::policyOf(s).shardParams, InputField::OffloadParam,
              "param offload to " + std::string(tierName(s.offload.param)) +
                  " needs a strategy that shards params (zero3, fsdp, fsdp_grad_op, fsdp_hybrid), "
                  "not " +
                  std::string(plan::strategyName(s.strategy)));
    validateKnobs(s.knobs);
    validateSizes(s);
    validateActivations(s);
}

namespace {

struct StatesBuilder {
    const Scenario& s;
    const ShardPlan& plan;
    ModelStates out;
    std::uint64_t shardPadNumerator = 0; // Σ pad elements × bytes over sharded categories

    std::string psi() const { return "Ψ = " + std::to_string(plan.params); }
    std::string perUnit(const std::string& b) const {
        if (plan.bare)
            return b + " × Ψ / " + shardSymbol() + "  (" + psi() + ", unpadded, rounded up)";
        return b + " × Σ pad(unit, " + shardSymbol() + ") / " + shardSymbol() + "  (" +
               std::to_string(plan.paddedTotal()) + " padded elements, " + psi() + ")";
    }
    std::string shardSymbol() const {
        return (detail::policyOf(s).hybrid ? "G = " : "N = ") + std::to_string(plan.shards);
    }

    void add(Category c, Tier t, std::uint64_t bytes, std::string formula, std::string source) {
        if (bytes == 0) return;
        out.perRank.at(c, t) += bytes;
        out.lines.push_back({c, t, std::move(formula), std::move(source), bytes});
    }

    // A sharded state: b bytes per element, split over the shard count.
    void sharded(Category c, Tier t, std::uint32_t b, const std::string& source,
                 bool inclPersistent = true) {
        const std::uint64_t bytes = plan.shardBytes(b, inclPersistent);
        add(c, t, bytes, perUnit(std::to_string(b) + " B"), source);
        if (!plan.bare) {
            // Pad elements sit in the last shards; report the average per rank (rounded down
            // once, in modelStates) so paddingBytes × S is what the whole group pads.
            std::uint64_t padElements = 0;
            for (const auto& u : plan.units)
                if (inclPersistent || !u.persistent) padElements += u.padded - u.params;
            shardPadNumerator += padElements * b;
        }
    }

    // A full (replicated) state: every element on every rank.
    void full(Category c, Tier t, std::uint32_t b, const std::string& source) {
        const std::uint64_t bytes = plan.fullBytes(b);
        const bool padded = !plan.bare && plan.shards > 1;
        add(c, t, bytes,
            std::to_string(b) + " B × " + (padded ? "Σ pad(unit, " + shardSymbol() + ")" : "Ψ") +
                "  (" + psi() + ")",
            source);
        if (padded) out.paddingBytes += bytes - plan.params * b;
    }
};

Tier gradTier(const Scenario& s) {
    // ZeRO-Offload moves the gradient shards to the host, where the CPU optimizer reads them.
    return s.offload.optimizer == Tier::Device ? Tier::Device : Tier::Host;
}

std::string optimizerSource(const Scenario& s) {
    if (s.offload.optimizer == Tier::Host)
        return std::string(strategySource(s.strategy)) + "; " + kSrcOffload;
    if (s.offload.optimizer == Tier::Nvme)
        return std::string(strategySource(s.strategy)) + "; " + kSrcInfinity;
    return strategySource(s.strategy);
}

void addOptimizer(StatesBuilder& b, bool shardedStates) {
    const Scenario& s = b.s;
    const std::string src = optimizerSource(s);
    const Tier t = s.offload.optimizer;
    const std::pair<Category, std::uint32_t> states[] = {
        {Category::MasterFp32, s.precision.masterBytes()},
        {Category::AdamM, s.precision.adamMBytes()},
        {Category::AdamV, s.precision.adamVBytes()}};
    for (const auto& [c, bytes] : states) {
        if (shardedStates)
            b.sharded(c, t, bytes, src);
        else
            b.full(c, t, bytes, src);
    }
}

void addParams(StatesBuilder& b) {
    const Scenario& s = b.s;
    const std::uint32_t p = s.precision.paramBytes();
    const char* src = strategySource(s.strategy);
    if (!detail::policyOf(s).shardParams) {
        b.full(Category::ParamFull, Tier::Device, p, src);
        return;
    }
    const std::string shardSrc =
        s.offload.param == Tier::Device
            ? std::string(src)
            : std::string(src) + "; " +
                  (s.offload.param == Tier::Host ? kSrcOffload : kSrcInfinity);
    b.sharded(Category::ParamShard, s.offload.param, p, shardSrc, /*inclPersistent=*/false);
    const std::uint64_t persistentBytes = b.plan.fullBytes(p, /*persistentOnly=*/true);
    b.add(Category::ParamFull, Tier::Device, persistentBytes,
          std::to_string(p) + " B × Σ units ≤ " +
              std::to_string(s.knobs.persistenceThresholdParams) + " params (kept whole)",
          kSrcPersist);
    if (detail::policyOf(s).keepsParamsGathered) {
        // Unsharded after forward and kept until backward: every unit's full padded buffer.
        const std::uint64_t gathered = b.plan.fullBytes(p);
        b.add(Category::ParamFull, Tier::Device, gathered,
              std::to_string(p) + " B × Σ pad(unit, " + b.shardSymbol() +
                  ")  (gathered from forward to backward)",
              src);
        b.out.paddingBytes += gathered - b.plan.params * p;
    }
}

void addGrads(StatesBuilder& b) {
    const Scenario& s = b.s;
    const std::uint32_t g = s.precision.gradBytes();
    const char* src = strategySource(s.strategy);
    if (!detail::policyOf(s).shardGrads) {
        b.full(Category::GradFull, Tier::Device, g, src);
        return;
    }
    const std::string gsrc =
        gradTier(s) == Tier::Device ? std::string(src) : std::string(src) + "; " + kSrcOffload;
    b.sharded(Category::GradShard, gradTier(s), g, gsrc);
}

} // namespace

ModelStates modelStates(const Scenario& s) {
    const ShardPlan plan = detail::makePlan(s);
    StatesBuilder b{s, plan, {}};
    addParams(b);
    addGrads(b);
    addOptimizer(b, detail::policyOf(s).shardOptimizer);
    b.out.paramCount = plan.params;
    b.out.paddedParamCount = plan.paddedTotal();
    b.out.shardCount = static_cast<int>(plan.shards);
    b.out.paddingBytes += b.shardPadNumerator / plan.shards;
    return std::move(b.out);
}

// ZeRO paper §5 / Table 1: baseline (2+2+K)Ψ; Pos 4Ψ + KΨ/Nd; Pos+g 2Ψ + (2+K)Ψ/Nd;
// Pos+g+p (2+2+K)Ψ/Nd with K = 12.
double zeroPaperBytes(double psi, double ranks, int stage) {
    constexpr double k = 12.0;
    switch (stage) {
    case 0:
        return (2.0 + 2.0 + k) * psi;
    case 1:
        return 4.0 * psi + k * psi / ranks;
    case 2:
        return 2.0 * psi + (2.0 + k) * psi / ranks;
    case 3:
        return (2.0 + 2.0 + k) * psi / ranks;
    default:
        throwInvalid("ZeRO stage must be 0–3, got " + std::to_string(stage));
    }
}

} // namespace shardscope::theory
