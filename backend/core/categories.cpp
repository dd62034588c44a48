#include "core/categories.h"

namespace shardscope {

std::optional<Category> parseCategory(std::string_view name) {
    for (Category c : kAllCategories)
        if (categoryName(c) == name) return c;
    return std::nullopt;
}

std::optional<Tier> parseTier(std::string_view name) {
    for (Tier t : kAllTiers)
        if (tierName(t) == name) return t;
    return std::nullopt;
}

std::uint64_t ByteTable::category(Category c) const {
    std::uint64_t sum = 0;
    for (Tier t : kAllTiers)
        sum += at(c, t);
    return sum;
}

std::uint64_t ByteTable::tier(Tier t) const {
    std::uint64_t sum = 0;
    for (Category c : kAllCategories)
        sum += at(c, t);
    return sum;
}

std::uint64_t ByteTable::group(StateGroup g, std::optional<Tier> t) const {
    std::uint64_t sum = 0;
    for (Category c : kAllCategories) {
        if (stateGroup(c) != g) continue;
        sum += t ? at(c, *t) : category(c);
    }
    return sum;
}

std::uint64_t ByteTable::total() const {
    std::uint64_t sum = 0;
    for (Category c : kAllCategories)
        sum += category(c);
    return sum;
}

} // namespace shardscope
