#pragma once
// What each element a lesson may outline shows, and which of a paragraph's facts each one can
// back. The lesson reader checks every step against this table, so a step cannot outline a chart
// of model states beside a paragraph about the peak, or quote the ledger at the playhead while
// outlining a chart that ignores the playhead.
//
// Note: the facts of a paragraph fall into families (resources/lessons/README.md lists the
// names). Run facts (the preset, N, Ψ, the bytes a step sends) and a reference run's facts hold
// for the whole run, whatever the screen shows at the moment; every other family must be on the
// outlined element: the moment at the playhead (the event and the rank's ledger there), the
// model states, the peak, the memory tiers. The GUI test walks every step and checks the claims
// this table makes against the widgets themselves (the event the explain panel describes, the
// collective the flow view draws).
#include <array>
#include <cstdint>
#include <string_view>

namespace shardscope::lessons {

enum class Facts : std::uint8_t { Run, Reference, Moment, States, Peak, Tiers, kCount };
inline constexpr std::size_t kFactsCount = static_cast<std::size_t>(Facts::kCount);

constexpr unsigned bit(Facts f) {
    return 1u << static_cast<unsigned>(f);
}

// The family of a placeholder name ("ev.unit" → Moment, "ref.peak" → Reference, …).
Facts factsOf(std::string_view placeholder);
std::string_view factsName(Facts f);

struct ElementTraits {
    std::string_view objectName;
    std::string_view page; // the page it lives on
    unsigned shows = 0;    // bit(Facts) of what it displays; Run and Reference need none
    // It shows the moment only for a collective (the flow view draws the last collective begun
    // before the playhead, not a compute or a free): a step quoting the moment there must seek to
    // a collective's begin or end.
    bool collectivesOnly = false;
};

inline constexpr unsigned kMoment = bit(Facts::Moment);
inline constexpr unsigned kStates = bit(Facts::States);
inline constexpr unsigned kPeak = bit(Facts::Peak);
inline constexpr unsigned kTiers = bit(Facts::Tiers);

inline constexpr std::array kElements = {
    // Ranks page: one column per rank, the ledger at the playhead with its peak tick and the
    // theory's peak line, a bar per tier, the units' strip.
    ElementTraits{"rankLedgerView", "ranks", kMoment | kStates | kPeak | kTiers},
    // The focus rank's live bytes by category over the run, with the playhead's line.
    ElementTraits{"memoryTimelinePlot", "ranks", kMoment | kStates | kPeak},
    // End-of-run model states by category, measured beside theory; not the playhead.
    ElementTraits{"measuredVsTheoryPlot", "ranks", kStates},
    ElementTraits{"savingsPlot", "ranks", kStates},
    ElementTraits{"runSavings", "ranks", kStates | kPeak},
    ElementTraits{"runButton", "ranks", 0},
    // Timeline: every rank's spans with the playhead's line, the peak beside each lane.
    ElementTraits{"timelineView", "timeline", kMoment | kPeak},
    ElementTraits{"flowView", "flows", kMoment, true},
    // Compare: the runs' reports side by side.
    ElementTraits{"compareLedgerPlot", "compare", kStates | kPeak},
    ElementTraits{"comparePeakPlot", "compare", kPeak},
    ElementTraits{"compareCommPlot", "compare", 0},
    // Calculator: DeepSpeed's estimators beside ShardScope's theory (its inputs, not a run).
    ElementTraits{"deepspeedPanel", "calculator", 0},
};

const ElementTraits* findElement(std::string_view objectName);

} // namespace shardscope::lessons
