#pragma once
// Ledger vocabulary shared by the theory engine, the devices, the protocol and the GUI.
//
// Note: the enumerators' numeric values are part of the recording format
// (protocol/protocol.h). Append new values at the end; never reorder.
#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace shardscope {

enum class Category : std::uint8_t {
    ParamShard,
    ParamFull,
    GradFull,
    GradShard,
    MasterFp32,
    AdamM,
    AdamV,
    Activation,
    CommBuffer,
    Workspace,
};
inline constexpr std::size_t kCategoryCount = 10;
static_assert(kCategoryCount == static_cast<std::size_t>(Category::Workspace) + 1);

enum class Tier : std::uint8_t { Device, Host, Nvme };
inline constexpr std::size_t kTierCount = 3;
static_assert(kTierCount == static_cast<std::size_t>(Tier::Nvme) + 1);

inline constexpr std::array<Category, kCategoryCount> kAllCategories = {
    Category::ParamShard, Category::ParamFull, Category::GradFull, Category::GradShard,
    Category::MasterFp32, Category::AdamM,     Category::AdamV,    Category::Activation,
    Category::CommBuffer, Category::Workspace};

inline constexpr std::array<Tier, kTierCount> kAllTiers = {Tier::Device, Tier::Host, Tier::Nvme};

// Wire and JSON names (docs/design.md's vocabulary).
constexpr std::string_view categoryName(Category c) {
    constexpr std::array<std::string_view, kCategoryCount> names = {
        "param_shard", "param_full", "grad_full",  "grad_shard",  "master_fp32",
        "adam_m",      "adam_v",     "activation", "comm_buffer", "workspace"};
    return names[static_cast<std::size_t>(c)];
}

constexpr std::string_view tierName(Tier t) {
    constexpr std::array<std::string_view, kTierCount> names = {"device", "host", "nvme"};
    return names[static_cast<std::size_t>(t)];
}

std::optional<Category> parseCategory(std::string_view name);
std::optional<Tier> parseTier(std::string_view name);

// Which of the three model-state groups of the ZeRO paper a category belongs to.
enum class StateGroup : std::uint8_t { Param, Grad, Optimizer, Other };
constexpr StateGroup stateGroup(Category c) {
    switch (c) {
    case Category::ParamShard:
    case Category::ParamFull:
        return StateGroup::Param;
    case Category::GradFull:
    case Category::GradShard:
        return StateGroup::Grad;
    case Category::MasterFp32:
    case Category::AdamM:
    case Category::AdamV:
        return StateGroup::Optimizer;
    case Category::Activation:
    case Category::CommBuffer:
    case Category::Workspace:
        return StateGroup::Other;
    }
    return StateGroup::Other;
}

constexpr std::size_t index(Category c) {
    return static_cast<std::size_t>(c);
}
constexpr std::size_t index(Tier t) {
    return static_cast<std::size_t>(t);
}

// Bytes per (category, tier): the shape of every ledger, measured or predicted.
struct ByteTable {
    std::array<std::array<std::uint64_t, kTierCount>, kCategoryCount> bytes{};

    std::uint64_t& at(Category c, Tier t) { return bytes[index(c)][index(t)]; }
    std::uint64_t at(Category c, Tier t) const { return bytes[index(c)][index(t)]; }
    std::uint64_t category(Category c) const; // summed over tiers
    std::uint64_t tier(Tier t) const;         // summed over categories
    std::uint64_t group(StateGroup g, std::optional<Tier> t = std::nullopt) const;
    std::uint64_t total() const;
    bool operator==(const ByteTable&) const = default;
};

} // namespace shardscope
