#include "replay/stream_assembler.h"

#include "core/error.h"

#include <algorithm>
#include <numeric>
#include <string>
#include <utility>

namespace shardscope::replay {

namespace {
// A step number a recording may carry: it is counted on after a resume (core/step_number.h,
// with at most 2^53 steps before) and shown, so it stays far from overflowing.
constexpr std::int64_t kMaxRecordedStep = std::int64_t{1} << 53;

[[noreturn]] void inconsistent(const std::string& what) {
    throw Error(ErrorKind::Format, what);
}

// The step's events in time order, ties in rank order: what a stable sort of the ranks' lists
// concatenated in rank order gives, computed as merges. Each rank's list is in time order as a
// rank sends it (sorted here if a stream says otherwise); neighbouring lists are merged pairwise,
// the lower ranks' on the left, and std::merge takes the left element of a tie, so the order is
// the sort's: log2(ranks) passes over the events where the sort took about log2(events).
std::vector<Event> mergeByTime(std::vector<std::vector<Event>>& perRank) {
    const auto earlier = [](const Event& a, const Event& b) { return a.timeNs < b.timeNs; };
    std::vector<std::vector<Event>> runs;
    for (auto& v : perRank) {
        if (v.empty()) continue;
        if (!std::is_sorted(v.begin(), v.end(), earlier))
            std::stable_sort(v.begin(), v.end(), earlier);
        runs.push_back(std::move(v));
        v = {};
    }
    while (runs.size() > 1) {
        std::vector<std::vector<Event>> next;
        next.reserve((runs.size() + 1) / 2);
        for (std::size_t i = 0; i + 1 < runs.size(); i += 2) {
            std::vector<Event> merged(runs[i].size() + runs[i + 1].size());
            std::merge(runs[i].begin(), runs[i].end(), runs[i + 1].begin(), runs[i + 1].end(),
                       merged.begin(), earlier);
            next.push_back(std::move(merged));
        }
        if (runs.size() % 2 == 1) next.push_back(std::move(runs.back()));
        runs = std::move(next);
    }
    return runs.empty() ? std::vector<Event>{} : std::move(runs.front());
}

// The record's size on the wire (length, type, payload): what the stream paid for it.
std::uint64_t encodedSize(const protocol::Record& record) {
    struct Size {
        std::uint64_t operator()(const protocol::Handshake& h) const {
            return 12 + h.configJson.size();
        }
        std::uint64_t operator()(const protocol::EventBatch& b) const {
            return 8 + b.events.size() * protocol::kEventBytes;
        }
        std::uint64_t operator()(const protocol::StepSummary&) const { return 24; }
        std::uint64_t operator()(const protocol::Report& r) const { return 4 + r.json.size(); }
        std::uint64_t operator()(const protocol::Failure& f) const { return 16 + f.message.size(); }
        std::uint64_t operator()(const protocol::End&) const { return 0; }
    };
    return 5 + std::visit(Size{}, record);
}

} // namespace

std::size_t StreamAssembler::snapshotInterval(int worldSize) {
    return std::max<std::size_t>(1024, 256 * static_cast<std::size_t>(std::max(worldSize, 1)));
}

void StreamAssembler::consume(protocol::Record record) {
    inputBytes_ += encodedSize(record);
    if (auto* h = std::get_if<protocol::Handshake>(&record)) {
        onHandshake(*h);
    } else if (auto* b = std::get_if<protocol::EventBatch>(&record)) {
        onBatch(std::move(*b));
    } else if (auto* s = std::get_if<protocol::StepSummary>(&record)) {
        if (!info_) inconsistent("a step summary arrived before any handshake");
        if (s->step <= lastStep_ || s->step >= kMaxStep)
            inconsistent("a step summary for step " + std::to_string(s->step) + " follows step " +
                         std::to_string(lastStep_));
        closeStep(s->step, true, s->loss, s->stepNs);
    } else if (auto* r = std::get_if<protocol::Report>(&record)) {
        // The report is a summary beside the events: a recording whose report does not read
        // (one from before reports had a schema) still replays, and says why it has none.
        report::Parsed<report::RunReport> parsed = report::parseRunReport(r->json);
        if (parsed)
            out_.report = std::make_shared<const report::RunReport>(std::move(*parsed.value));
        else
            out_.reportProblem = "the run's report: " + parsed.error;
    } else if (auto* f = std::get_if<protocol::Failure>(&record)) {
        if (f->step < -1 || f->step > kMaxRecordedStep)
            inconsistent("a failure names step " + std::to_string(f->step));
        flushPartialStep();
        // The message is the file's text: shown, never interpreted (escaped, capped).
        out_.failures.push_back({f->rank, f->step, protocol::printableText(f->message)});
        ended_ = true;
    } else {
        flushPartialStep();
        out_.ended = true;
        ended_ = true;
    }
}

void StreamAssembler::onHandshake(const protocol::Handshake& h) {
    if (info_) {
        if (h.worldSize != worldSize_)
            inconsistent("rank " + std::to_string(h.rank) + " reports world size " +
                         std::to_string(h.worldSize) + ", rank 0 said " +
                         std::to_string(worldSize_));
        return; // every rank sends the same configuration; the first one describes the run
    }
    auto info = std::make_shared<const RunInfo>(parseRunInfo(h.configJson, h.worldSize));
    if (info->worldSize != h.worldSize)
        inconsistent("the handshake's configuration says world size " +
                     std::to_string(info->worldSize) + ", its record says " +
                     std::to_string(h.worldSize));
    worldSize_ = h.worldSize;
    chargeLedger(1);
    info_ = std::move(info);
    pending_.assign(static_cast<std::size_t>(worldSize_), {});
    running_.assign(static_cast<std::size_t>(worldSize_), RankState{});
    out_.runInfo = info_;
}

void StreamAssembler::onBatch(protocol::EventBatch&& b) {
    if (!info_) inconsistent("events arrived before any handshake");
    if (b.rank < 0 || b.rank >= worldSize_)
        inconsistent("an event batch names rank " + std::to_string(b.rank) + " in a run of " +
                     std::to_string(worldSize_) + " ranks");
    // Units index the configuration's list where it has one (a run without one names none).
    const std::size_t units = info_->units.size();
    for (const Event& e : b.events)
        if (e.step < -1 || e.step > kMaxRecordedStep) // counted on and shown: bounded
            inconsistent("rank " + std::to_string(b.rank) + " sent an event of step " +
                         std::to_string(e.step));
    for (const Event& e : b.events)
        if (units > 0 && e.unit != kNoUnit &&
            (e.unit < 0 || static_cast<std::size_t>(e.unit) >= units))
            inconsistent("rank " + std::to_string(b.rank) + " sent an event for unit " +
                         std::to_string(e.unit) + " of a model with " + std::to_string(units) +
                         " units");
    auto& into = pending_[static_cast<std::size_t>(b.rank)];
    for (Event& e : b.events) {
        e.rank = b.rank; // the batch's rank is authoritative: the ledger of that rank changes
        into.push_back(e);
    }
}

void StreamAssembler::flushPartialStep() {
    if (!info_) return;
    const bool anything =
        std::any_of(pending_.begin(), pending_.end(), [](const auto& v) { return !v.empty(); });
    if (anything) closeStep(lastStep_ + 1, false, 0, 0);
}

void StreamAssembler::chargeLedger(std::size_t states) {
    ledgerBytes_ += states * static_cast<std::uint64_t>(worldSize_) * sizeof(RankState);
    if (ledgerBytes_ > kLedgerAllowanceBytes + kLedgerBytesPerInputByte * inputBytes_)
        inconsistent("the stream asks for " + std::to_string(ledgerBytes_ >> 20) +
                     " MiB of replay state (world size " + std::to_string(worldSize_) + ", " +
                     std::to_string(lastStep_ + 1) + " steps) from " + std::to_string(inputBytes_) +
                     " bytes");
}

void StreamAssembler::closeStep(std::int64_t step, bool complete, double loss,
                                std::uint64_t stepNs) {
    if (step >= kMaxStep) inconsistent("step " + std::to_string(step) + " is out of range");
    // Snapshots, one per snapshotInterval events (at least one), and the end state.
    const std::size_t events =
        std::accumulate(pending_.begin(), pending_.end(), std::size_t{0},
                        [](std::size_t n, const auto& v) { return n + v.size(); });
    chargeLedger(events / snapshotInterval(worldSize_) + 2);
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
