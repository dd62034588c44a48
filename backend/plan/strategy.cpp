// Strategy / precision names and per-element byte counts (strategy.h).
#include "plan/strategy.h"

#include <algorithm>
#include <array>

namespace shardscope::plan {

namespace {

constexpr std::array<std::pair<Strategy, std::string_view>, kStrategyCount> kStrategyNames = {{
    {Strategy::Ddp, "ddp"},
    {Strategy::Zero1, "zero1"},
    {Strategy::Zero2, "zero2"},
    {Strategy::Zero3, "zero3"},
    {Strategy::FsdpFullShard, "fsdp"},
    {Strategy::FsdpShardGradOp, "fsdp_grad_op"},
    {Strategy::FsdpHybridShard, "fsdp_hybrid"},
}};
static_assert(kStrategyNames.back().first == Strategy::FsdpHybridShard,
              "one name per strategy, in order");

constexpr std::array<std::pair<PrecisionKind, std::string_view>, 4> kPrecisionNames = {{
    {PrecisionKind::MixedBf16, "bf16"},
    {PrecisionKind::MixedFp16, "fp16"},
    {PrecisionKind::Fp32, "fp32"},
    {PrecisionKind::Custom, "custom"},
}};

constexpr std::uint32_t kFp32 = 4;
constexpr std::uint32_t kHalf = 2;

} // namespace

std::string_view strategyName(Strategy s) {
    for (const auto& [strategy, name] : kStrategyNames)
        if (strategy == s) return name;
    return "unknown";
}

std::optional<Strategy> parseStrategy(std::string_view name) {
    for (const auto& [strategy, n] : kStrategyNames)
        if (n == name) return strategy;
    return std::nullopt;
}

std::vector<Strategy> allStrategies() {
    std::vector<Strategy> out;
    for (const auto& entry : kStrategyNames)
        out.push_back(entry.first);
    return out;
}

std::vector<Strategy> classicStrategies() {
    return {Strategy::Ddp, Strategy::Zero1, Strategy::Zero2, Strategy::Zero3,
            Strategy::FsdpFullShard};
}

std::string strategyList(const std::vector<Strategy>& strategies) {
    std::string out;
    for (const Strategy s : strategies) {
        if (!out.empty()) out += ',';
        out += strategyName(s);
    }
    return out;
}

std::string_view precisionName(PrecisionKind k) {
    for (const auto& [kind, name] : kPrecisionNames)
        if (kind == k) return name;
    return "unknown";
}

std::optional<PrecisionKind> parsePrecision(std::string_view name) {
    for (const auto& [kind, n] : kPrecisionNames)
        if (n == name) return kind;
    return std::nullopt;
}

std::uint32_t Precision::paramBytes() const {
    return kind == PrecisionKind::Fp32 ? kFp32 : kHalf;
}
std::uint32_t Precision::gradBytes() const {
    return paramBytes();
}

// Mixed precision keeps an fp32 master copy (Micikevicius et al. 2018); pure fp32 updates the
// working copy in place. Custom K: the master takes the first 4 bytes (if K allows), m and v
// split the rest, m getting the odd byte — K = 12 gives the usual 4 + 4 + 4, K = 6 (8-bit
// Adam states, fp32 master) gives 4 + 1 + 1.
std::uint32_t Precision::masterBytes() const {
    switch (kind) {
    case PrecisionKind::MixedBf16:
    case PrecisionKind::MixedFp16:
        return kFp32;
    case PrecisionKind::Fp32:
        return 0;
    case PrecisionKind::Custom:
        return std::min(customOptimizerBytes, kFp32);
    }
    return 0;
}

std::uint32_t Precision::adamMBytes() const {
    if (kind != PrecisionKind::Custom) return kFp32;
    const std::uint32_t rest = customOptimizerBytes - masterBytes();
    return rest - rest / 2;
}

std::uint32_t Precision::adamVBytes() const {
    if (kind != PrecisionKind::Custom) return kFp32;
    return (customOptimizerBytes - masterBytes()) / 2;
}

std::uint32_t Precision::optimizerBytes() const {
    return masterBytes() + adamMBytes() + adamVBytes();
}

} // namespace shardscope::plan
