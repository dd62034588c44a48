#include "lessons/lesson.h"

#include "lessons/elements.h"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <set>

namespace shardscope::lessons {
namespace {

using nlohmann::json;

struct Bad {
    std::string message;
};

[[noreturn]] void bad(const std::string& where, const std::string& what) {
    throw Bad{where + ": " + what};
}

const json& need(const json& object, const char* key, const std::string& where) {
    const auto it = object.find(key);
    if (it == object.end()) bad(where, std::string("missing \"") + key + "\"");
    return *it;
}

void onlyKeys(const json& object, const std::set<std::string>& allowed, const std::string& where) {
    if (!object.is_object()) bad(where, "must be an object");
    for (const auto& [key, value] : object.items()) {
        (void)value;
        if (allowed.count(key)) continue;
        std::string shown =
            key.substr(0, kMaxNameBytes); // echoed on one line: no control characters
        for (char& c : shown)
            if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
        bad(where, "unknown key \"" + shown + "\"");
    }
}

std::string boundedString(const json& value, std::size_t maxBytes, const std::string& where) {
    if (!value.is_string()) bad(where, "must be a string");
    const auto& s = value.get_ref<const std::string&>();
    if (s.size() > maxBytes) bad(where, "longer than " + std::to_string(maxBytes) + " bytes");
    return s;
}

// Ids, file names, pages, objectNames and unit names: short, printable, no path separators.
std::string name(const json& value, const std::string& where, bool recording = false) {
    std::string s = boundedString(value, kMaxNameBytes, where);
    if (s.empty()) bad(where, "must not be empty");
    for (const char c : s) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                        (c >= '0' && c <= '9') || c == '_' || c == '-' || (recording && c == '.');
        if (!ok)
            bad(where, "may hold only letters, digits, '_' and '-'" +
                           std::string(recording ? " and '.'" : ""));
    }
    if (recording &&
        (s.size() < 9 || s.compare(s.size() - 8, 8, ".sstrace") != 0 || s.front() == '.'))
        bad(where, "must name a .sstrace file");
    return s;
}

std::int64_t integer(const json& value, std::int64_t lo, std::int64_t hi,
                     const std::string& where) {
    if (!value.is_number_integer()) bad(where, "must be an integer");
    const std::int64_t v =
        value.is_number_unsigned() && value.get<std::uint64_t>() > static_cast<std::uint64_t>(hi)
            ? hi + 1
            : value.get<std::int64_t>();
    if (v < lo || v > hi)
        bad(where, "must be between " + std::to_string(lo) + " and " + std::to_string(hi));
    return v;
}

Text text(const json& value, const std::string& where) {
    onlyKeys(value, {"en", "zh_CN"}, where);
    Text t;
    t.en = boundedString(need(value, "en", where), kMaxTextBytes, where + ".en");
    if (t.en.empty()) bad(where + ".en", "must not be empty");
    if (value.contains("zh_CN"))
        t.zhCN = boundedString(value["zh_CN"], kMaxTextBytes, where + ".zh_CN");
    return t;
}

template <std::size_t N>
std::size_t enumIndex(const json& value, const std::array<std::string_view, N>& names,
                      const std::string& where) {
    const std::string s = name(value, where);
    for (std::size_t i = 0; i < N; ++i)
        if (names[i] == s) return i;
    bad(where, "unknown value \"" + s + "\"");
}

Seek seek(const json& value, const std::string& where) {
    onlyKeys(value,
             {"at", "step", "kind", "collective", "phase", "category", "transfer", "unit", "rank",
              "nth"},
             where);
    Seek s;
    if (value.contains("at")) {
        const std::string at = name(value["at"], where + ".at");
        if (at == "start")
            s.at = Seek::At::Start;
        else if (at == "peak")
            s.at = Seek::At::Peak;
        else if (at == "end")
            s.at = Seek::At::End;
        else if (at == "event")
            s.at = Seek::At::Event;
        else
            bad(where + ".at", "must be start, peak, end or event");
    }
    if (value.contains("step")) s.step = integer(value["step"], 1, kMaxSeekStep, where + ".step");
    if (value.contains("kind"))
        s.kind = static_cast<EventKind>(enumIndex(value["kind"], kEventKindNames, where + ".kind"));
    if (value.contains("collective"))
        s.collective = static_cast<CollectiveOp>(
            enumIndex(value["collective"], kCollectiveOpNames, where + ".collective"));
    if (value.contains("phase"))
        s.phase = static_cast<Phase>(enumIndex(value["phase"], kPhaseNames, where + ".phase"));
    if (value.contains("category")) {
        const std::string c = name(value["category"], where + ".category");
        s.category = parseCategory(c);
        if (!s.category) bad(where + ".category", "unknown value \"" + c + "\"");
    }
    if (value.contains("transfer"))
        s.transfer = static_cast<Transfer>(
            enumIndex(value["transfer"], kTransferNames, where + ".transfer"));
    if (value.contains("unit")) s.unit = name(value["unit"], where + ".unit");
    if (value.contains("rank"))
        s.rank = static_cast<int>(integer(value["rank"], 0, kMaxRanks - 1, where + ".rank"));
    if (value.contains("nth"))
        s.nth = static_cast<int>(integer(value["nth"], 1, kMaxNth, where + ".nth"));
    const bool filtered = s.kind || s.collective || s.phase || s.category || s.transfer ||
                          !s.unit.empty() || value.contains("nth");
    if (filtered && s.at != Seek::At::Event) bad(where, "event filters need \"at\": \"event\"");
    return s;
}

RunSettings settings(const json& value, const std::string& where) {
    onlyKeys(value, {"model", "ranks", "strategy", "steps", "checkpointing", "prefetch"}, where);
    RunSettings r;
    if (value.contains("model")) r.model = name(value["model"], where + ".model");
    if (value.contains("ranks"))
        r.ranks = static_cast<int>(integer(value["ranks"], 1, kMaxRanks, where + ".ranks"));
    if (value.contains("strategy")) {
        const std::string s = name(value["strategy"], where + ".strategy");
        const auto strategy = plan::parseStrategy(s);
        if (!strategy) bad(where + ".strategy", "unknown strategy \"" + s + "\"");
        r.strategy = *strategy;
    }
    if (value.contains("steps"))
        r.steps = static_cast<int>(integer(value["steps"], 1, kMaxRunSteps, where + ".steps"));
    if (value.contains("checkpointing")) {
        if (!value["checkpointing"].is_boolean())
            bad(where + ".checkpointing", "must be true or false");
        r.checkpointing = value["checkpointing"].get<bool>();
    }
    if (value.contains("prefetch"))
        r.prefetch = static_cast<int>(integer(value["prefetch"], 0, 8, where + ".prefetch"));
    return r;
}

// An event seek names the event it is about: its kind, step and unit, and what tells apart the
// events of one unit of that kind (a rank frees a unit's gathered parameters and its workspace).
void checkEventSeek(const Seek& k, const std::string& where) {
    if (k.at != Seek::At::Event) return;
    if (!k.kind) bad(where, "an event seek names its \"kind\"");
    if (k.step == 0) bad(where, "an event seek names its \"step\"");
    switch (*k.kind) {
    case EventKind::Alloc:
    case EventKind::Free:
        if (!k.category) bad(where, "an alloc or free seek names its \"category\"");
        break;
    case EventKind::CollectiveBegin:
    case EventKind::CollectiveEnd:
        if (!k.collective) bad(where, "a collective seek names its \"collective\"");
        return; // a bucket's collective (ZeRO-1/2, DDP) belongs to no unit
    case EventKind::ComputeBegin:
    case EventKind::ComputeEnd:
        if (!k.phase) bad(where, "a compute seek names its \"phase\"");
        break;
    case EventKind::TransferBegin:
    case EventKind::TransferEnd:
    case EventKind::TransferWait:
        if (!k.transfer) bad(where, "a transfer seek names its \"transfer\"");
        break;
    case EventKind::StepBegin:
    case EventKind::StepEnd:
        return; // a step's boundary belongs to no unit
    }
    if (k.unit.empty()) bad(where, "an event seek names its \"unit\"");
}

bool isCollectiveSeek(const std::optional<Seek>& k) {
    return k && k->at == Seek::At::Event && k->kind &&
           (*k->kind == EventKind::CollectiveBegin || *k->kind == EventKind::CollectiveEnd);
}

// A byte size written into a paragraph ("1.6 MB") instead of quoted from the run.
bool hasLiteralSize(std::string_view t) {
    for (const std::string_view unit : {"kB", "MB", "GB", "TB", "KiB", "MiB", "GiB", "TiB"}) {
        for (std::size_t at = t.find(unit); at != std::string_view::npos;
             at = t.find(unit, at + 1)) {
            const std::size_t end = at + unit.size();
            if (end < t.size() && std::isalpha(static_cast<unsigned char>(t[end]))) continue;
            std::size_t i = at;
            if (i > 0 && t[i - 1] == ' ') --i;
            if (i > 0 && t[i - 1] >= '0' && t[i - 1] <= '9') return true;
        }
    }
    return false;
}

// Note: a step is about one thing. Its paragraph quotes only facts the outlined element shows
// (elements.h), the moment at the playhead only where a seek put it, and no byte size of its own;
// its outline is on the page it shows.
void checkOneSubject(const Step& s, const std::string& where) {
    const ElementTraits* element = nullptr;
    if (!s.highlight.empty()) {
        element = findElement(s.highlight);
        if (!element)
            bad(where + ".highlight", "\"" + s.highlight +
                                          "\" is not an element lessons can outline "
                                          "(backend/lessons/elements.h)");
        if (!s.page.empty() && element->page != s.page)
            bad(where + ".highlight", "\"" + s.highlight + "\" is on the " +
                                          std::string(element->page) + " page, the step shows " +
                                          s.page);
    }
    if (s.seek) checkEventSeek(*s.seek, where + ".seek");
    if (element && element->collectivesOnly && s.seek && !isCollectiveSeek(s.seek))
        bad(where + ".seek", "\"" + s.highlight +
                                 "\" draws the last collective before the playhead: seek to a "
                                 "collective's begin or end");
    const std::vector<std::string> english = placeholders(s.text.en);
    for (const std::string* t : {&s.text.en, &s.text.zhCN}) {
        const std::string lang = t == &s.text.en ? ".text.en" : ".text.zh_CN";
        if (hasLiteralSize(*t))
            bad(where + lang, "writes a byte size of its own: quote it from the run");
        if (t->empty()) continue;
        std::vector<std::string> names = placeholders(*t);
        if (t != &s.text.en) {
            std::vector<std::string> a = names, b = english;
            std::sort(a.begin(), a.end());
            std::sort(b.begin(), b.end());
            a.erase(std::unique(a.begin(), a.end()), a.end());
            b.erase(std::unique(b.begin(), b.end()), b.end());
            if (a != b) bad(where + lang, "quotes other facts than the English text");
        }
        for (const std::string& n : names) {
            const Facts f = factsOf(n);
            if (f == Facts::Run || f == Facts::Reference) continue;
            if (f == Facts::Moment && !s.seek)
                bad(where + lang, "{" + n +
                                      "} is the moment at the playhead: the step needs a "
                                      "\"seek\"");
            if (!element || !(element->shows & bit(f)))
                bad(where + lang, "{" + n + "} quotes " + std::string(factsName(f)) + ", which " +
                                      (element ? "\"" + s.highlight + "\" does not show"
                                               : std::string("no outlined element shows")));
        }
    }
}

Step step(const json& value, const std::string& where) {
    onlyKeys(value,
             {"title", "text", "recording", "reference", "compare", "configure", "run", "page",
              "seek", "highlight"},
             where);
    Step s;
    s.title = text(need(value, "title", where), where + ".title");
    s.text = text(need(value, "text", where), where + ".text");
    if (value.contains("recording"))
        s.recording = name(value["recording"], where + ".recording", true);
    if (value.contains("reference"))
        s.reference = name(value["reference"], where + ".reference", true);
    if (value.contains("compare")) {
        const json& list = value["compare"];
        if (!list.is_array() || list.empty() || list.size() > kMaxCompared)
            bad(where + ".compare",
                "must be a list of 1 to " + std::to_string(kMaxCompared) + " recordings");
        for (std::size_t i = 0; i < list.size(); ++i)
            s.compare.push_back(name(list[i], where + ".compare[" + std::to_string(i) + "]", true));
    }
    if (value.contains("configure"))
        s.configure = settings(value["configure"], where + ".configure");
    if (value.contains("run")) {
        if (!value["run"].is_boolean()) bad(where + ".run", "must be true or false");
        s.run = value["run"].get<bool>();
    }
    if (s.run && !s.configure) bad(where + ".run", "needs \"configure\"");
    if (s.run && !s.recording.empty()) bad(where, "cannot both run and open a recording");
    if (value.contains("page")) s.page = name(value["page"], where + ".page");
    if (value.contains("seek")) s.seek = seek(value["seek"], where + ".seek");
    if (s.seek && s.recording.empty() && !s.run)
        bad(where + ".seek", "needs a \"recording\" or \"run\" in the same step");
    if (value.contains("highlight")) s.highlight = name(value["highlight"], where + ".highlight");
    checkOneSubject(s, where);
    return s;
}

} // namespace

const std::string& Text::in(std::string_view language) const {
    return language == "zh_CN" && !zhCN.empty() ? zhCN : en;
}

ParsedLesson parseLesson(std::string_view input) {
    ParsedLesson out;
    if (input.size() > kMaxLessonBytes) {
        out.error = "lesson file is larger than " + std::to_string(kMaxLessonBytes) + " bytes";
        return out;
    }
    const json j = json::parse(input.begin(), input.end(), nullptr, false);
    if (j.is_discarded()) {
        out.error = "lesson file is not valid JSON";
        return out;
    }
    try {
        const std::string where = "lesson";
        onlyKeys(j, {"schema", "id", "order", "title", "summary", "steps"}, where);
        if (boundedString(need(j, "schema", where), kMaxNameBytes, "schema") != kLessonSchema)
            bad("schema", "expected \"" + std::string(kLessonSchema) + "\"");
        Lesson lesson;
        lesson.id = name(need(j, "id", where), "id");
        lesson.order = static_cast<int>(integer(need(j, "order", where), 0, 1000, "order"));
        lesson.title = text(need(j, "title", where), "title");
        if (j.contains("summary")) lesson.summary = text(j["summary"], "summary");
        const json& steps = need(j, "steps", where);
        if (!steps.is_array() || steps.empty() || steps.size() > kMaxSteps)
            bad("steps", "must be a list of 1 to " + std::to_string(kMaxSteps) + " steps");
        for (std::size_t i = 0; i < steps.size(); ++i)
            lesson.steps.push_back(step(steps[i], "steps[" + std::to_string(i) + "]"));
        out.lesson = std::move(lesson);
    } catch (const Bad& b) {
        out.error = b.message;
    } catch (const json::exception& e) {
        out.error = std::string("lesson file: ") + e.what();
    }
    return out;
}

std::vector<std::string> placeholders(std::string_view text) {
    std::vector<std::string> out;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] != '{') continue;
        std::size_t j = i + 1;
        while (j < text.size() && j - i <= kMaxNameBytes &&
               ((text[j] >= 'a' && text[j] <= 'z') || (text[j] >= '0' && text[j] <= '9') ||
                text[j] == '_' || text[j] == '.'))
            ++j;
        if (j < text.size() && text[j] == '}' && j > i + 1) {
            out.emplace_back(text.substr(i + 1, j - i - 1));
            i = j;
        }
    }
    return out;
}

} // namespace shardscope::lessons
