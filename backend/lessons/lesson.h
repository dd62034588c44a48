#pragma once
// A lesson: a guided tour through one claim, as data (resources/lessons/*.json, described in
// resources/lessons/README.md). Each step may set the run configuration, start a run or open a
// bundled recording, switch page, seek to an event, and highlight a widget by objectName; its
// paragraph holds {placeholders} the GUI fills from the run actually loaded.
//
// parseLesson() is the one reader: every string, count and index is bounded, unknown keys are
// errors (a typo in a lesson must not silently drop a step's action).
#include "core/event.h"
#include "plan/strategy.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace shardscope::lessons {

inline constexpr std::string_view kLessonSchema = "shardscope.lesson/1";
inline constexpr std::size_t kMaxLessonBytes = 256 * 1024;
inline constexpr std::size_t kMaxSteps = 64;
inline constexpr std::size_t kMaxTextBytes = 8192;
inline constexpr std::size_t kMaxNameBytes = 64; // ids, recording names, pages, objectNames, units
inline constexpr std::int64_t kMaxSeekStep = 1'000'000;
inline constexpr int kMaxNth = 1'000'000;
inline constexpr int kMaxRanks = 64;
inline constexpr int kMaxRunSteps = 1000;
inline constexpr std::size_t kMaxCompared = 8;

// One text in every language the lesson carries; English is required, others fall back to it.
struct Text {
    std::string en;
    std::string zhCN;
    const std::string& in(std::string_view language) const; // "en" | "zh_CN"
    bool operator==(const Text&) const = default;
};

// Where the playhead goes once the step's recording or run is loaded.
struct Seek {
    enum class At { Start, Peak, End, Event };
    At at = At::Peak;
    std::int64_t step = 0; // 1-based step of the run; 0: the last step loaded
    // At::Event: the nth (1-based) event of that step matching every filter given.
    std::optional<EventKind> kind;
    std::optional<CollectiveOp> collective;
    std::optional<Phase> phase;
    std::optional<Category> category; // Alloc / Free: which buffer (param_full, not workspace)
    std::optional<Transfer> transfer; // Transfer*: which copy between tiers
    std::string unit;                 // unit name ("block0"); empty: any
    int rank = 0;
    int nth = 1;
    bool operator==(const Seek&) const = default;
};

// The run settings a step puts into the Ranks page (and runs when `run` is set).
struct RunSettings {
    std::string model = "tiny";
    int ranks = 4;
    plan::Strategy strategy = plan::Strategy::Zero3;
    int steps = 2;
    bool checkpointing = false;
    int prefetch = 1;
    bool operator==(const RunSettings&) const = default;
};

struct Step {
    Text title;
    Text text;             // with {placeholders}
    std::string recording; // a bundled recording's file name ("zero3_tiny_4r.sstrace"), or empty
    std::string reference; // a bundled recording whose report the text quotes as {ref.…}
    std::vector<std::string> compare; // bundled recordings whose reports fill the Compare page
    std::optional<RunSettings> configure;
    bool run = false; // start `configure` as a live run
    std::string page; // "ranks", "timeline", …; empty: stay
    std::optional<Seek> seek;
    std::string highlight; // objectName of the widget to outline; empty: none
    bool operator==(const Step&) const = default;
};

struct Lesson {
    std::string id;
    int order = 0;
    Text title;
    Text summary;
    std::vector<Step> steps;
    bool operator==(const Lesson&) const = default;
};

struct ParsedLesson {
    std::optional<Lesson> lesson;
    std::string error; // one line naming the key and what is wrong
    explicit operator bool() const { return lesson.has_value(); }
};

ParsedLesson parseLesson(std::string_view text);

// The {name} placeholders of a text, in order of appearance (names: [a-z0-9_.]).
std::vector<std::string> placeholders(std::string_view text);

} // namespace shardscope::lessons
