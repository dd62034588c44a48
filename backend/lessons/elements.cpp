#include "lessons/elements.h"

#include <algorithm>

namespace shardscope::lessons {
namespace {

bool startsWith(std::string_view s, std::string_view prefix) {
    return s.substr(0, prefix.size()) == prefix;
}

bool oneOf(std::string_view s, std::initializer_list<std::string_view> names) {
    return std::find(names.begin(), names.end(), s) != names.end();
}

} // namespace

Facts factsOf(std::string_view p) {
    if (startsWith(p, "ref.")) return Facts::Reference;
    if (startsWith(p, "ev.") || startsWith(p, "live.") || p == "gathered" || p == "event_index")
        return Facts::Moment;
    if (startsWith(p, "tier_")) return Facts::Tiers;
    if (startsWith(p, "peak") || startsWith(p, "at_peak.") ||
        oneOf(p, {"predicted_peak", "beyond_states", "activation_theory"}))
        return Facts::Peak;
    if (startsWith(p, "state") || startsWith(p, "bpp") ||
        oneOf(p, {"theory_total", "padding", "ddp_total", "saving"}))
        return Facts::States;
    return Facts::Run; // the run's handshake, its steps, what a step sends, the last loss
}

std::string_view factsName(Facts f) {
    static constexpr std::array<std::string_view, kFactsCount> names = {
        "the run",          "the reference run", "the moment at the playhead",
        "the model states", "the peak",          "the memory tiers"};
    return names[static_cast<std::size_t>(f)];
}

const ElementTraits* findElement(std::string_view objectName) {
    for (const ElementTraits& e : kElements)
        if (e.objectName == objectName) return &e;
    return nullptr;
}

} // namespace shardscope::lessons
