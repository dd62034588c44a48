#include "replay/timeline_index.h"

#include "plan/collective.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace shardscope::replay {

namespace {
template <class Pred> SpanKind firstKind(Pred pred, SpanKind otherwise) {
    for (const SpanKindTraits& t : kSpanKinds)
        if (pred(t)) return t.kind;
    return otherwise;
}
} // namespace

SpanKind spanKindOf(Phase p) {
    return firstKind([p](const SpanKindTraits& t) { return p != Phase::None && t.phase == p; },
                     SpanKind::Forward);
}

SpanKind spanKindOf(CollectiveOp c) {
    return firstKind([c](const SpanKindTraits& t) { return c != CollectiveOp::None && t.op == c; },
                     SpanKind::AllGather);
}

SpanKind spanKindOf(Transfer x) {
    return firstKind(
        [x](const SpanKindTraits& t) { return x != Transfer::None && t.transfer == x; },
        SpanKind::DeviceToHost);
}

double algBandwidth(std::uint64_t bytes, std::uint64_t ns) {
    if (ns == 0) return 0;
    return static_cast<double>(bytes) * 1e9 / static_cast<double>(ns);
}

double busBandwidth(SpanKind kind, std::uint64_t bytes, std::uint64_t ns, int peers) {
    const double alg = algBandwidth(bytes, ns);
    const CollectiveOp op = traitsOf(kind).op;
    return op == CollectiveOp::None ? alg : alg * plan::busBandwidthFactor(op, peers);
}

void TimelineIndex::reset(int worldSize) {
    lanes_.assign(static_cast<std::size_t>(std::max(worldSize, 0)), {});
    build_.assign(lanes_.size(), {});
    steps_ = 0;
    endNs_ = 0;
    peak_ = 0;
    kinds_ = 0;
}

std::size_t TimelineIndex::spanCount() const {
    std::size_t n = 0;
    for (const auto& l : lanes_)
        for (const auto& r : l.rows)
            n += r.size();
    return n;
}

bool TimelineIndex::hasKind(SpanKind k) const {
    return (kinds_ >> static_cast<unsigned>(k)) & 1u;
}

bool TimelineIndex::hasTransfers() const {
    return std::any_of(lanes_.begin(), lanes_.end(), [](const TimelineLane& l) {
        return !l.rows[static_cast<std::size_t>(TimelineRow::Transfers)].empty();
    });
}

void TimelineIndex::close(int rank, TimelineRow row, const Open& o, std::uint64_t ns,
                          std::uint64_t event) {
    TimelineSpan s;
    s.beginNs = o.ns;
    s.endNs = std::max(ns, o.ns);
    s.beginEvent = o.event;
    s.endEvent = event;
    s.bytes = o.bytes;
    s.unit = o.unit;
    s.peers = o.peers;
    s.kind = o.kind;
    s.depth = o.depth;
    s.microBatch = o.micro;
    kinds_ |= 1u << static_cast<unsigned>(o.kind);
    build_[static_cast<std::size_t>(rank)].fresh[static_cast<std::size_t>(row)].push_back(s);
}

// Spans are closed in end order; sorting the fresh ones by begin and appending keeps each row
// sorted unless a span opened before the previous update's last one (then: one full sort).
void TimelineIndex::merge(TimelineLane& lane, RankBuild& b) {
    const auto byBegin = [](const TimelineSpan& a, const TimelineSpan& c) {
        return a.beginNs < c.beginNs;
    };
    for (std::size_t r = 0; r < kTimelineRowCount; ++r) {
        auto& fresh = b.fresh[r];
        if (fresh.empty()) continue;
        std::sort(fresh.begin(), fresh.end(), byBegin);
        auto& row = lane.rows[r];
        auto& maxEnd = lane.maxEnd[r];
        std::size_t from = row.size();
        if (!row.empty() && fresh.front().beginNs < row.back().beginNs) from = 0;
        row.insert(row.end(), fresh.begin(), fresh.end());
        fresh.clear();
        if (from == 0) std::stable_sort(row.begin(), row.end(), byBegin);
        maxEnd.resize(row.size());
        std::uint64_t m = from == 0 ? 0 : maxEnd[from - 1];
        for (std::size_t i = from; i < row.size(); ++i)
            maxEnd[i] = m = std::max(m, row[i].endNs);
    }
}

void TimelineIndex::update(const ReplayModel& model) {
    if (lanes_.size() != static_cast<std::size_t>(model.worldSize()) || model.stepCount() < steps_)
        reset(model.worldSize());
    for (; steps_ < model.stepCount(); ++steps_) {
        const StepData& step = model.step(steps_);
        for (std::size_t i = 0; i < step.events.size(); ++i) {
            const Event& e = step.events[i];
            if (e.rank < 0 || static_cast<std::size_t>(e.rank) >= lanes_.size()) continue;
            const std::uint64_t ns = step.replayNs(i);
            const std::uint64_t k = step.firstEvent + i;
            RankBuild& b = build_[static_cast<std::size_t>(e.rank)];
            TimelineLane& lane = lanes_[static_cast<std::size_t>(e.rank)];
            endNs_ = std::max(endNs_, ns);
            switch (e.kind) {
            case EventKind::ComputeBegin:
                b.compute.open(*spanKeyOf(e), {ns, k, 0, e.unit, 0, spanKindOf(e.phase),
                                               static_cast<std::uint8_t>(std::min<std::size_t>(
                                                   b.compute.openCount(), kMaxDepth)),
                                               e.microBatch});
                break;
            case EventKind::ComputeEnd:
                if (const auto o = b.compute.close(*spanKeyOf(e)))
                    close(e.rank, TimelineRow::Compute, *o, ns, k);
                break;
            case EventKind::CollectiveBegin:
                b.collectives.open(*spanKeyOf(e),
                                   {ns, k, e.bytes, e.unit, e.peers, spanKindOf(e.collective),
                                    static_cast<std::uint8_t>(std::min<std::size_t>(
                                        b.collectives.openCount(), kMaxDepth)),
                                    e.microBatch});
                break;
            case EventKind::CollectiveEnd:
                if (const auto o = b.collectives.close(*spanKeyOf(e)))
                    close(e.rank, TimelineRow::Comm, *o, ns, k);
                break;
            case EventKind::Alloc:
            case EventKind::Free: {
                applyEvent(b.ledger, e);
                lane.memNs.push_back(ns);
                lane.memBytes.push_back(b.ledger.liveTotal);
                lane.peakBytes = std::max(lane.peakBytes, b.ledger.liveTotal);
                peak_ = std::max(peak_, b.ledger.liveTotal);
                if (e.category != Category::ParamFull) break;
                if (e.kind == EventKind::Alloc) {
                    // Depth = the lowest sub-row no open buffer uses: a prefetched unit sits
                    // beside the one being computed instead of on top of it.
                    const auto& open = b.buffers.openSpans();
                    std::uint8_t depth = 0;
                    while (depth < kMaxDepth &&
                           std::any_of(open.begin(), open.end(),
                                       [depth](const auto& o) { return o.value.depth == depth; }))
                        ++depth;
                    b.buffers.open(*spanKeyOf(e),
                                   {ns, k, e.bytes, e.unit, 0, SpanKind::ParamFull, depth});
                } else if (const auto o = b.buffers.close(*spanKeyOf(e))) {
                    close(e.rank, TimelineRow::Buffers, *o, ns, k);
                }
                break;
            }
            case EventKind::TransferBegin:
                b.transfers.open(*spanKeyOf(e), {ns, k, e.bytes, e.unit, 0, spanKindOf(e.transfer),
                                                 static_cast<std::uint8_t>(std::min<std::size_t>(
                                                     b.transfers.openCount(), kMaxDepth))});
                break;
            case EventKind::TransferEnd:
                if (const auto o = b.transfers.close(*spanKeyOf(e)))
                    close(e.rank, TimelineRow::Transfers, *o, ns, k);
                break;
            case EventKind::TransferWait:
                lane.waits.push_back({ns, k, e.transfer, e.unit, e.bytes});
                break;
            case EventKind::StepBegin:
            case EventKind::StepEnd:
                break;
            }
        }
    }
    addIdle(model);
    for (std::size_t r = 0; r < lanes_.size(); ++r)
        merge(lanes_[r], build_[r]);
}

std::optional<double> TimelineLane::idleFraction() const {
    if (stepIdle.empty()) return std::nullopt;
    std::vector<double> steps(stepIdle.begin() + (stepIdle.size() > 1 ? 1 : 0), stepIdle.end());
    std::sort(steps.begin(), steps.end());
    const std::size_t n = steps.size();
    return n % 2 == 1 ? steps[n / 2] : (steps[n / 2 - 1] + steps[n / 2]) / 2;
}

// Steps arrive whole (update indexes complete steps), so every rank's spans of a step are in
// one call: the step's window is known before any rank's gaps are cut from it.
void TimelineIndex::addIdle(const ReplayModel& model) {
    const auto stepOf = [&](const TimelineSpan& s) {
        return s.beginEvent < model.eventCount() ? model.event(s.beginEvent).step : -1;
    };
    std::map<std::int64_t, std::pair<std::uint64_t, std::uint64_t>> window; // step → [begin, end)
    std::vector<std::vector<const TimelineSpan*>> work(lanes_.size());
    for (std::size_t r = 0; r < lanes_.size(); ++r)
        for (const TimelineSpan& s :
             build_[r].fresh[static_cast<std::size_t>(TimelineRow::Compute)])
            if (s.depth == 0 && (s.kind == SpanKind::Forward || s.kind == SpanKind::Backward ||
                                 s.kind == SpanKind::WeightGrad)) {
                work[r].push_back(&s);
                const auto [it, fresh] = window.try_emplace(stepOf(s), s.beginNs, s.endNs);
                if (!fresh) {
                    it->second.first = std::min(it->second.first, s.beginNs);
                    it->second.second = std::max(it->second.second, s.endNs);
                }
            }
    for (std::size_t r = 0; r < lanes_.size(); ++r) {
        auto& spans = work[r];
        std::sort(spans.begin(), spans.end(), [](const TimelineSpan* a, const TimelineSpan* b) {
            return a->beginNs < b->beginNs;
        });
        TimelineLane& lane = lanes_[r];
        for (std::size_t i = 0; i < spans.size();) {
            const std::int64_t step = stepOf(*spans[i]);
            const auto [begin, end] = window.at(step);
            std::uint64_t cursor = begin, idle = 0;
            const auto gap = [&](std::uint64_t to) {
                if (to <= cursor) return;
                lane.idle.push_back({cursor, to});
                idle += to - cursor;
            };
            for (; i < spans.size() && stepOf(*spans[i]) == step; ++i) {
                gap(spans[i]->beginNs);
                cursor = std::max(cursor, spans[i]->endNs);
            }
            gap(end);
            lane.idleNs += idle;
            if (end > begin)
                lane.stepIdle.push_back(static_cast<double>(idle) /
                                        static_cast<double>(end - begin));
        }
    }
}

std::size_t TimelineIndex::firstEndingAtOrAfter(int rank, TimelineRow row, std::uint64_t t) const {
    const auto& maxEnd = lane(rank).maxEnd[static_cast<std::size_t>(row)];
    return static_cast<std::size_t>(std::lower_bound(maxEnd.begin(), maxEnd.end(), t) -
                                    maxEnd.begin());
}

std::optional<std::size_t> TimelineIndex::spanAt(int rank, TimelineRow row, std::uint64_t t,
                                                 std::uint64_t slackNs) const {
    if (rank < 0 || rank >= laneCount()) return std::nullopt;
    const auto& spans = lane(rank).rows[static_cast<std::size_t>(row)];
    const std::uint64_t lo = t > slackNs ? t - slackNs : 0;
    std::optional<std::size_t> best;
    for (std::size_t i = firstEndingAtOrAfter(rank, row, lo); i < spans.size(); ++i) {
        const TimelineSpan& s = spans[i];
        if (s.beginNs > t + slackNs) break;
        if (s.endNs + slackNs < t) continue;
        // Innermost wins: a span that holds t exactly beats one only within the slack, then
        // the shorter one (recompute inside its backward).
        const auto holds = [t](const TimelineSpan& x) { return x.beginNs <= t && t <= x.endNs; };
        if (!best) {
            best = i;
            continue;
        }
        const TimelineSpan& b = spans[*best];
        if ((holds(s) && !holds(b)) || (holds(s) == holds(b) && s.durationNs() < b.durationNs()))
            best = i;
    }
    return best;
}

namespace {

struct Pending {
    bool open = false;
    DrawBox box;
    std::array<double, kSpanKindCount> time{}; // ns per kind, for the summary's colour
};

void flush(Pending& p, std::vector<DrawBox>& out) {
    if (!p.open) return;
    if (p.box.merged > 1)
        p.box.kind =
            static_cast<SpanKind>(std::max_element(p.time.begin(), p.time.end()) - p.time.begin());
    out.push_back(p.box);
    p.open = false;
    p.time = {};
}

} // namespace

void layoutLane(const TimelineLane& lane, const TimeWindow& w, std::vector<DrawBox>& out,
                double minPx) {
    const double t0 = std::max(0.0, w.t0);
    for (std::size_t r = 0; r < kTimelineRowCount; ++r) {
        const auto& spans = lane.rows[r];
        const auto& maxEnd = lane.maxEnd[r];
        std::array<Pending, kMaxDepth + 1> pending;
        auto i = static_cast<std::size_t>(
            std::lower_bound(maxEnd.begin(), maxEnd.end(), static_cast<std::uint64_t>(t0)) -
            maxEnd.begin());
        for (; i < spans.size(); ++i) {
            const TimelineSpan& s = spans[i];
            if (static_cast<double>(s.beginNs) > w.t1) break;
            if (static_cast<double>(s.endNs) < w.t0)
                continue; // ends before the window (overlap bookkeeping)
            const double x0 = std::max(w.xOf(static_cast<double>(s.beginNs)), -1.0);
            const double x1 = std::min(w.xOf(static_cast<double>(s.endNs)), w.widthPx + 1);
            Pending& p = pending[s.depth];
            const bool narrow = x1 - x0 < minPx;
            // Only narrow spans join a box, and only a narrow one or a summary: a span wide
            // enough to read keeps its own box (and its label and tooltip).
            if (narrow && p.open && (p.box.merged > 1 || p.box.x1 - p.box.x0 < minPx) &&
                x0 - p.box.x1 < minPx) {
                p.box.x1 = std::max(p.box.x1, x1);
                ++p.box.merged;
                p.time[static_cast<std::size_t>(s.kind)] += static_cast<double>(s.durationNs());
                continue;
            }
            flush(p, out);
            p.open = true;
            p.box = DrawBox{x0, x1, static_cast<TimelineRow>(r), s.depth, s.kind, 1, i};
            p.time[static_cast<std::size_t>(s.kind)] = static_cast<double>(s.durationNs());
        }
        for (Pending& p : pending)
            flush(p, out);
    }
}

void memoryColumns(const TimelineLane& lane, const TimeWindow& w, int columns,
                   std::vector<MemColumn>& out) {
    out.assign(static_cast<std::size_t>(std::max(columns, 0)), {});
    if (lane.memNs.empty() || columns <= 0) return;
    const auto& ts = lane.memNs;
    const double nsPerCol = (w.t1 - w.t0) / columns;
    // Index of the first sample at or after the column's start; the value carried in is the
    // sample before it.
    auto at = [&](double t) {
        if (t <= 0) return std::size_t{0};
        return static_cast<std::size_t>(
            std::lower_bound(ts.begin(), ts.end(), static_cast<std::uint64_t>(std::ceil(t))) -
            ts.begin());
    };
    std::size_t i = at(w.t0);
    for (int c = 0; c < columns; ++c) {
        const double end = w.t0 + (c + 1) * nsPerCol;
        MemColumn col;
        if (i > 0) {
            col = {lane.memBytes[i - 1], lane.memBytes[i - 1], true};
        }
        // Past the last sample the curve stops (the run has not got there yet).
        if (i >= ts.size() && static_cast<double>(ts.back()) < w.t0 + c * nsPerCol) break;
        for (; i < ts.size() && static_cast<double>(ts[i]) < end; ++i) {
            const std::uint64_t v = lane.memBytes[i];
            if (!col.valid) col = {v, v, true};
            col.lo = std::min(col.lo, v);
            col.hi = std::max(col.hi, v);
        }
        out[static_cast<std::size_t>(c)] = col;
    }
}

} // namespace shardscope::replay
