#include "trace_export/exports.h"

#include "core/error.h"
#include "core/user_files.h"
#include "replay/flow_state.h"
#include "replay/timeline_index.h"

#include <algorithm>
#include <functional>
#include <nlohmann/json.hpp>
#include <unordered_map>

namespace shardscope::trace_export {

namespace {

using nlohmann::json;

// Buffers text and hands it to the output file a megabyte at a time.
class Sink {
public:
    Sink(OutputFile& file, const std::function<void()>& poll) : file_(file), poll_(poll) {}
    void put(std::string_view text) {
        buffer_ += text;
        if (buffer_.size() >= (1u << 20)) flush();
    }
    void flush() {
        if (poll_) poll_();
        file_.write(buffer_);
        buffer_.clear();
    }

private:
    OutputFile& file_;
    const std::function<void()>& poll_;
    std::string buffer_;
};

double micros(std::uint64_t ns) {
    return static_cast<double>(ns) / 1000.0;
}

std::string rowName(replay::TimelineRow row) {
    switch (row) {
    case replay::TimelineRow::Compute:
        return "compute";
    case replay::TimelineRow::Comm:
        return "communication";
    case replay::TimelineRow::Buffers:
        return "gathered parameters";
    case replay::TimelineRow::Transfers:
        return "transfers";
    }
    return "track";
}

std::string spanName(replay::SpanKind k) {
    return std::string(replay::traitsOf(k).name);
}

// Thread ids: 100 per row, one per sub-track (pid = rank + 1: pid 0 is special in some viewers).
int tidOf(replay::TimelineRow row, int track) {
    return 1 + 100 * static_cast<int>(row) + track;
}

struct Placed {
    const replay::TimelineSpan* span;
    int track;
};

// Each span goes to the first sub-track where it nests inside whatever is still open there, so
// every thread's begin/end pairs nest (Chrome's rule for B/E on one thread).
std::vector<Placed> placeSpans(const std::vector<replay::TimelineSpan>& spans) {
    std::vector<const replay::TimelineSpan*> order;
    order.reserve(spans.size());
    for (const auto& s : spans)
        order.push_back(&s);
    std::stable_sort(order.begin(), order.end(), [](const auto* a, const auto* b) {
        return a->beginNs != b->beginNs ? a->beginNs < b->beginNs : a->endNs > b->endNs;
    });
    std::vector<std::vector<std::uint64_t>> open; // per track: end times of open spans
    std::vector<Placed> out;
    out.reserve(order.size());
    for (const auto* s : order) {
        std::size_t t = 0;
        for (; t < open.size(); ++t) {
            auto& stack = open[t];
            while (!stack.empty() && stack.back() <= s->beginNs)
                stack.pop_back();
            if (stack.empty() || stack.back() >= s->endNs) break;
        }
        if (t == open.size()) open.emplace_back();
        open[t].push_back(s->endNs);
        out.push_back({s, static_cast<int>(t)});
    }
    return out;
}

class PerfettoWriter {
public:
    PerfettoWriter(const replay::ReplayModel& model, Sink& sink, ExportCounts& counts)
        : model_(model), sink_(sink), counts_(counts) {}

    void write() {
        sink_.put("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
        timeline_.reset(model_.worldSize());
        timeline_.update(model_);
        flows_.reset(model_.worldSize());
        flows_.update(model_);
        beginOf_.assign(static_cast<std::size_t>(model_.worldSize()), {});
        for (int r = 0; r < model_.worldSize(); ++r) {
            emit({{"ph", "M"},
                  {"name", "process_name"},
                  {"pid", r + 1},
                  {"args", {{"name", "rank " + std::to_string(r)}}}});
            emit({{"ph", "M"},
                  {"name", "process_sort_index"},
                  {"pid", r + 1},
                  {"args", {{"sort_index", r}}}});
            for (std::size_t row = 0; row < replay::kTimelineRowCount; ++row)
                slices(r, static_cast<replay::TimelineRow>(row));
        }
        counters();
        flowArrows();
        const auto& info = *model_.info();
        sink_.put("\n],\"otherData\":");
        sink_.put(json({{"producer", "shardscope-cli export"},
                        {"strategy", info.strategy},
                        {"model", info.model},
                        {"world_size", info.worldSize},
                        {"clock", "replay: each step's real timestamps, steps back to back"}})
                      .dump());
        sink_.put("}\n");
    }

private:
    void emit(const json& event) {
        if (!first_) sink_.put(",\n");
        first_ = false;
        sink_.put(event.dump());
    }

    void slices(int rank, replay::TimelineRow row) {
        const auto& spans = timeline_.lane(rank).rows[static_cast<std::size_t>(row)];
        const std::vector<Placed> placed = placeSpans(spans);
        int tracks = 0;
        for (const Placed& p : placed)
            tracks = std::max(tracks, p.track + 1);
        for (int t = 0; t < tracks; ++t) {
            const int tid = tidOf(row, t);
            std::string threadName = rowName(row);
            if (t > 0) threadName.append(" ").append(std::to_string(t + 1));
            emit({{"ph", "M"},
                  {"name", "thread_name"},
                  {"pid", rank + 1},
                  {"tid", tid},
                  {"args", {{"name", threadName}}}});
            emit({{"ph", "M"},
                  {"name", "thread_sort_index"},
                  {"pid", rank + 1},
                  {"tid", tid},
                  {"args", {{"sort_index", tid}}}});
            std::vector<const replay::TimelineSpan*> stack;
            for (const Placed& p : placed) {
                if (p.track != t) continue;
                while (!stack.empty() && stack.back()->endNs <= p.span->beginNs) {
                    end(rank, tid, *stack.back());
                    stack.pop_back();
                }
                begin(rank, tid, *p.span);
                stack.push_back(p.span);
            }
            while (!stack.empty()) {
                end(rank, tid, *stack.back());
                stack.pop_back();
            }
        }
    }

    void begin(int rank, int tid, const replay::TimelineSpan& s) {
        // The optimizer and a checkpoint save belong to no unit: no "unit -1" in their names.
        const std::string unit =
            s.unit == kNoUnit ? std::string() : model_.info()->unitName(s.unit);
        json args = {{"step", model_.event(s.beginEvent).step}};
        if (!unit.empty()) args["unit"] = unit;
        if (const int micro = model_.event(s.beginEvent).microBatch; micro >= 0)
            args["micro_batch"] = micro;
        if (replay::rowOf(s.kind) == replay::TimelineRow::Compute) args["phase"] = spanName(s.kind);
        if (s.bytes) args["bytes"] = s.bytes;
        if (replay::isCollective(s.kind)) {
            args["peers"] = s.peers;
            args["algbw_GBps"] = replay::algBandwidth(s.bytes, s.durationNs()) / 1e9;
            args["busbw_GBps"] =
                replay::busBandwidth(s.kind, s.bytes, s.durationNs(), s.peers) / 1e9;
            beginOf_[static_cast<std::size_t>(rank)][s.beginEvent] = {tid, s.beginNs};
        }
        if (replay::isTransfer(s.kind)) {
            args["direction"] = spanName(s.kind);
            args["GBps"] = replay::algBandwidth(s.bytes, s.durationNs()) / 1e9;
        }
        emit({{"ph", "B"},
              {"name", unit.empty() ? spanName(s.kind) : spanName(s.kind) + " " + unit},
              {"cat", rowName(rowOf(s.kind))},
              {"pid", rank + 1},
              {"tid", tid},
              {"ts", micros(s.beginNs)},
              {"args", args}});
        ++counts_.slices;
    }
    void end(int rank, int tid, const replay::TimelineSpan& s) {
        emit({{"ph", "E"}, {"pid", rank + 1}, {"tid", tid}, {"ts", micros(s.endNs)}});
    }

    // A counter per (category, tier) and the rank's live total, after every allocation or free.
    void counters() {
        replay::LedgerState state = model_.emptyState();
        for (const replay::StepPtr& step : model_.steps()) {
            for (std::size_t i = 0; i < step->events.size(); ++i) {
                const Event& e = step->events[i];
                replay::RankState& rs = state[static_cast<std::size_t>(e.rank)];
                replay::applyEvent(rs, e);
                if (e.kind != EventKind::Alloc && e.kind != EventKind::Free) continue;
                std::string name(categoryName(e.category));
                if (e.tier != Tier::Device) name += " (" + std::string(tierName(e.tier)) + ")";
                const double ts = micros(step->replayNs(i));
                emit({{"ph", "C"},
                      {"name", name},
                      {"pid", e.rank + 1},
                      {"ts", ts},
                      {"args", {{"bytes", rs.live.at(e.category, e.tier)}}}});
                emit({{"ph", "C"},
                      {"name", "live total"},
                      {"pid", e.rank + 1},
                      {"ts", ts},
                      {"args", {{"bytes", rs.liveTotal}}}});
                counts_.counters += 2;
            }
        }
    }

    // One flow per collective joining its ranks, earliest begin first.
    void flowArrows() {
        std::uint64_t id = 0;
        for (const replay::CollectiveGroup& g : flows_.groups()) {
            struct End {
                int rank, tid;
                std::uint64_t ns;
            };
            std::vector<End> ends;
            for (std::size_t r = 0; r < g.beginEvent.size() && r < beginOf_.size(); ++r) {
                const auto it = beginOf_[r].find(g.beginEvent[r]);
                if (it != beginOf_[r].end())
                    ends.push_back({static_cast<int>(r), it->second.first, it->second.second});
            }
            if (ends.size() < 2) continue;
            std::stable_sort(ends.begin(), ends.end(),
                             [](const End& a, const End& b) { return a.ns < b.ns; });
            // A message's arrow leaves its sender, whoever began first.
            std::stable_partition(ends.begin(), ends.end(),
                                  [&](const End& e) { return e.rank == g.sender; });
            ++id;
            const std::string name =
                std::string(collectiveOpName(g.op)) + " " + model_.info()->unitName(g.unit);
            for (std::size_t i = 0; i < ends.size(); ++i) {
                const char* ph = i == 0 ? "s" : i + 1 == ends.size() ? "f" : "t";
                json ev = {{"ph", ph},
                           {"id", id},
                           {"name", name},
                           {"cat", "collective"},
                           {"pid", ends[i].rank + 1},
                           {"tid", ends[i].tid},
                           {"ts", micros(ends[i].ns)}};
                if (i + 1 == ends.size()) ev["bp"] = "e";
                emit(ev);
            }
            ++counts_.flows;
        }
    }

    const replay::ReplayModel& model_;
    Sink& sink_;
    ExportCounts& counts_;
    replay::TimelineIndex timeline_;
    replay::FlowIndex flows_;
    // Per rank: a collective's opening event → (thread, begin ns) of its slice.
    std::vector<std::unordered_map<std::uint64_t, std::pair<int, std::uint64_t>>> beginOf_;
    bool first_ = true;
};

// RFC 4180: a field with a comma, quote or line break is quoted, quotes doubled.
std::string csvField(const std::string& s) {
    if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
    std::string out = "\"";
    for (char c : s)
        out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

} // namespace

std::string writePerfetto(const replay::ReplayModel& model, const std::string& path,
                          const std::string& flag, ExportCounts& counts,
                          const std::function<void()>& poll) {
    if (!model.info())
        throw Error(ErrorKind::InvalidArgument, flag + ": there is no run to export");
    OutputFile file(path, flag);
    Sink sink(file, poll);
    PerfettoWriter(model, sink, counts).write();
    sink.flush();
    return file.commit();
}

std::string writeLedgerCsv(const replay::ReplayModel& model, const std::string& path,
                           const std::string& flag, ExportCounts& counts,
                           const std::function<void()>& poll) {
    if (!model.info())
        throw Error(ErrorKind::InvalidArgument, flag + ": there is no run to export");
    OutputFile file(path, flag);
    Sink sink(file, poll);
    sink.put("time_ns,rank,category,tier,unit,live_bytes\n");
    replay::LedgerState state = model.emptyState();
    for (const replay::StepPtr& step : model.steps()) {
        for (std::size_t i = 0; i < step->events.size(); ++i) {
            const Event& e = step->events[i];
            replay::RankState& rs = state[static_cast<std::size_t>(e.rank)];
            replay::applyEvent(rs, e);
            if (e.kind != EventKind::Alloc && e.kind != EventKind::Free) continue;
            const std::string unit =
                e.unit == kNoUnit ? std::string() : model.info()->unitName(e.unit);
            sink.put(std::to_string(step->replayNs(i)) + "," + std::to_string(e.rank) + "," +
                     std::string(categoryName(e.category)) + "," + std::string(tierName(e.tier)) +
                     "," + csvField(unit) + "," + std::to_string(rs.live.at(e.category, e.tier)) +
                     "\n");
            ++counts.rows;
        }
    }
    sink.flush();
    return file.commit();
}

} // namespace shardscope::trace_export
