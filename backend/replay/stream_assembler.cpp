#include "replay/stream_assembler.h"

#include <algorithm>
#include <string>
#include <utility>

#include "core/error.h"

namespace shardscope::replay {
namespace {

[[noreturn]] void inconsistent(const std::string& what) { throw Error(ErrorKind::Format, what); }

// Per-rank lists are each in time order already; a stable sort of their concatenation (in
// rank order) merges them with ties kept in rank order, so the result is deterministic.
std::vector<Event> mergeByTime(std::vector<std::vector<Event>>& perRank) {
    std::size_t total = 0;
    for (const auto& v : perRank) total += v.size();
    std::vector<Event> merged;
    merged.reserve(total);
    for (auto& v : perRank) {
        merged.insert(merged.end(), v.begin(), v.end());
        v.clear();
    }
    std::stable_sort(merged.begin(), merged.end(), [](const Event& a, const Event& b) { return a.timeNs < b.timeNs; });
    return merged;
}

} // namespace

std::size_t StreamAssembler::snapshotInterval(int worldSize) {
    return std::max<std::size_t>(1024, 256 * static_cast<std::size_t>(std::max(worldSize, 1)));
}

void StreamAssembler::consume(protocol::Record record) {
    if (auto* h = std::get_if<protocol::Handshake>(&record)) {
        onHandshake(*h);
    } else if (auto* b = std::get_if<protocol::EventBatch>(&record)) {
        onBatch(std::move(*b));
    } else if (auto* s = std::get_if<protocol::StepSummary>(&record)) {
        if (!info_) inconsistent("a step summary arrived before any handshake");
        closeStep(s->step, true, s->loss, s->stepNs);
    } else if (auto* r = std::get_if<protocol::Report>(&record)) {
        // The report is a summary beside the events: a recording whose report does not read
        // (one from before reports had a schema) still replays, and says why it has none.
        report::Parsed<report::RunReport> parsed = report::parseRunReport(r->json);
        if (parsed) out_.report = std::make_shared<const report::RunReport>(std::move(*parsed.value));
        else out_.reportProblem = "the run's report: " + parsed.error;
    } else if (auto* f = std::get_if<protocol::Failure>(&record)) {
        flushPartialStep();
        out_.failures.push_back({f->rank, f->step, f->message});
    } else {
        flushPartialStep();
        out_.ended = true;
    }
}

void StreamAssembler::onHandshake(const protocol::Handshake& h) {
    if (info_) {
        if (h.worldSize != worldSize_)
            inconsistent("rank " + std::to_string(h.rank) + " reports world size " + std::to_string(h.worldSize) +
                         ", rank 0 said " + std::to_string(worldSize_));
        return; // every rank sends the same configuration; the first one describes the run
    }
    worldSize_ = h.worldSize;
    info_ = std::make_shared<const RunInfo>(parseRunInfo(h.configJson, h.worldSize));
    pending_.assign(static_cast<std::size_t>(worldSize_), {});
    running_.assign(static_cast<std::size_t>(worldSize_), RankState{});
    out_.runInfo = info_;
}

void StreamAssembler::onBatch(protocol::EventBatch&& b) {
    if (!info_) inconsistent("events arrived before any handshake");
    if (b.rank < 0 || b.rank >= worldSize_)
        inconsistent("an event batch names rank " + std::to_string(b.rank) + " in a run of " +
                     std::to_string(worldSize_) + " ranks");
    auto& into = pending_[static_cast<std::size_t>(b.rank)];
    for (Event& e : b.events) {
        e.rank = b.rank; // the batch's rank is authoritative: the ledger of that rank changes
        into.push_back(e);
    }
}

void StreamAssembler::flushPartialStep() {
    if (!info_) return;
    const bool anything = std::any_of(pending_.begin(), pending_.end(), [](const auto& v) { return !v.empty(); });
    if (anything) closeStep(lastStep_ + 1, false, 0, 0);
}

void StreamAssembler::closeStep(std::int64_t step, bool complete, double loss, std::uint64_t stepNs) {
    auto data = std::make_shared<StepData>();
    data->step = step;
    data->complete = complete;
    data->loss = loss;
    data->stepNs = stepNs;
    data->events = mergeByTime(pending_);
    data->firstEvent = nextEvent_;
    data->replayStartNs = replayNs_;
    data->snapshotEvery = snapshotInterval(worldSize_);
    if (!data->events.empty()) {
        data->startNs = data->events.front().timeNs;
        data->durationNs = data->events.back().timeNs - data->startNs;
    }
    std::uint64_t highest = 0;
    data->peakEvent = data->firstEvent;
    for (std::size_t i = 0; i < data->events.size(); ++i) {
        if (i % data->snapshotEvery == 0) data->snapshots.push_back(running_);
        const Event& e = data->events[i];
        RankState& s = running_[static_cast<std::size_t>(e.rank)];
        applyEvent(s, e);
        if (s.liveTotal > highest) {
            highest = s.liveTotal;
            data->peakEvent = data->firstEvent + i + 1;
        }
    }
    if (data->snapshots.empty()) data->snapshots.push_back(running_);
    data->endState = running_;
    nextEvent_ += data->events.size();
    // Steps play back to back: the idle time between them (logging, the summary) is skipped.
    // The extra nanosecond keeps the replay clock strictly increasing across the boundary.
    replayNs_ += data->durationNs + 1;
    lastStep_ = step;
    out_.steps.push_back(std::move(data));
}

StreamAssembler::Output StreamAssembler::take() {
    Output o = std::move(out_);
    out_ = Output{};
    return o;
}

} // namespace shardscope::replay
