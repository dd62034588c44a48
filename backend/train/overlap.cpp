#include "train/overlap.h"

#include <algorithm>

namespace shardscope::train {

std::vector<Span> mergeSpans(std::span<const Span> spans) {
    std::vector<Span> sorted;
    sorted.reserve(spans.size());
    for (const Span& s : spans)
        if (s.end > s.begin) sorted.push_back(s);
    std::sort(sorted.begin(), sorted.end(),
              [](const Span& a, const Span& b) { return a.begin < b.begin; });
    std::vector<Span> merged;
    for (const Span& s : sorted) {
        // Touching spans merge too: the union has no gap there.
        if (!merged.empty() && s.begin <= merged.back().end)
            merged.back().end = std::max(merged.back().end, s.end);
        else
            merged.push_back(s);
    }
    return merged;
}

std::uint64_t unionNs(std::span<const Span> spans) {
    std::uint64_t total = 0;
    for (const Span& s : mergeSpans(spans))
        total += s.end - s.begin;
    return total;
}

std::uint64_t exposedNs(std::span<const Span> covered, std::span<const Span> hiding) {
    const std::vector<Span> c = mergeSpans(covered), h = mergeSpans(hiding);
    std::uint64_t exposed = 0;
    std::size_t j = 0; // first hiding span that may still overlap the current covered span
    for (const Span& s : c) {
        std::uint64_t at = s.begin; // everything of s before `at` is accounted for
        while (j < h.size() && h[j].end <= at)
            ++j;
        for (std::size_t k = j; k < h.size() && h[k].begin < s.end; ++k) {
            if (h[k].begin > at) exposed += h[k].begin - at;
            at = std::max(at, h[k].end);
            if (at >= s.end) break;
        }
        if (at < s.end) exposed += s.end - at;
    }
    return exposed;
}

std::vector<Span> subtractSpans(std::span<const Span> a, std::span<const Span> b) {
    const std::vector<Span> h = mergeSpans(b);
    std::vector<Span> out;
    std::size_t j = 0;
    for (const Span& s : mergeSpans(a)) {
        std::uint64_t at = s.begin;
        while (j < h.size() && h[j].end <= at)
            ++j;
        for (std::size_t k = j; k < h.size() && h[k].begin < s.end; ++k) {
            if (h[k].begin > at) out.push_back({at, h[k].begin});
            at = std::max(at, h[k].end);
            if (at >= s.end) break;
        }
        if (at < s.end) out.push_back({at, s.end});
    }
    return out;
}

StepOverlap stepOverlap(std::uint64_t stepBegin, std::uint64_t stepEnd, std::span<const Span> comm,
                        std::span<const Span> compute, std::span<const Span> blocking,
                        std::span<const Span> transfers) {
    StepOverlap o;
    if (stepEnd <= stepBegin) return o;
    o.stepNs = stepEnd - stepBegin;
    auto clip = [&](std::span<const Span> spans) {
        std::vector<Span> out;
        out.reserve(spans.size());
        for (const Span& s : spans)
            out.push_back({std::max(s.begin, stepBegin), std::min(s.end, stepEnd)});
        return out;
    };
    const std::vector<Span> c = clip(comm), k = subtractSpans(clip(compute), clip(blocking));
    o.commUnionNs = unionNs(c);
    o.exposedNs = exposedNs(c, k);
    const std::vector<Span> t = clip(transfers);
    o.transferUnionNs = unionNs(t);
    o.transferExposedNs = exposedNs(t, k);
    return o;
}

void addWork(StepOverlap& o, std::uint64_t stepBegin, std::uint64_t stepEnd,
             std::span<const Span> forward, std::span<const Span> backward,
             std::span<const Span> weightGrad) {
    std::vector<Span> f, b, w, all;
    for (const auto& [in, out] :
         {std::pair{forward, &f}, std::pair{backward, &b}, std::pair{weightGrad, &w}})
        for (const Span& s : in) {
            const Span c{std::max(s.begin, stepBegin), std::min(s.end, stepEnd)};
            if (c.end <= c.begin) continue;
            out->push_back(c);
            all.push_back(c);
        }
    o.forwardNs = unionNs(f);
    o.backwardNs = unionNs(b);
    o.weightGradNs = unionNs(w);
    o.workNs = unionNs(all);
    if (all.empty()) return;
    std::uint64_t first = all.front().begin, last = all.front().end;
    for (const Span& s : all) {
        first = std::min(first, s.begin);
        last = std::max(last, s.end);
    }
    o.workWindowNs = last - first;
}

namespace {
double median(std::vector<double> v) {
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    const std::size_t mid = v.size() / 2;
    return v.size() % 2 == 1 ? v[mid] : (v[mid - 1] + v[mid]) / 2.0;
}
} // namespace

OverlapSummary summarize(std::span<const StepOverlap> steps) {
    OverlapSummary s;
    std::vector<double> fractions, transferFractions;
    for (const StepOverlap& o : steps) {
        s.stepNs += o.stepNs;
        s.commUnionNs += o.commUnionNs;
        s.exposedNs += o.exposedNs;
        s.transferUnionNs += o.transferUnionNs;
        s.transferExposedNs += o.transferExposedNs;
        fractions.push_back(o.fraction());
        transferFractions.push_back(o.transferFraction());
    }
    s.medianFraction = median(std::move(fractions));
    s.medianTransferFraction = median(std::move(transferFractions));
    return s;
}

void OverlapTracker::onEvent(const Event& e) {
    switch (e.kind) {
    case EventKind::StepBegin:
        inStep_ = true;
        stepBegin_ = e.timeNs;
        open_.clear();
        waits_.clear();
        comm_.clear();
        compute_.clear();
        blocking_.clear();
        transfers_.clear();
        forward_.clear();
        backward_.clear();
        weightGrad_.clear();
        return;
    case EventKind::StepEnd:
        if (inStep_) {
            steps_.push_back(
                stepOverlap(stepBegin_, e.timeNs, comm_, compute_, blocking_, transfers_));
            addWork(steps_.back(), stepBegin_, e.timeNs, forward_, backward_, weightGrad_);
        }
        inStep_ = false;
        return;
    case EventKind::ComputeBegin:
    case EventKind::CollectiveBegin:
    case EventKind::TransferBegin:
        if (inStep_) open_.open(*spanKeyOf(e), e.timeNs);
        return;
    case EventKind::TransferWait:
        if (inStep_)
            waits_.open(SpanKey{SpanClass::Transfer, e.unit, static_cast<std::uint8_t>(e.transfer)},
                        e.timeNs);
        return;
    case EventKind::TransferEnd:
        if (!inStep_) return;
        if (const auto begin = open_.close(*spanKeyOf(e))) {
            transfers_.push_back({*begin, e.timeNs});
            if (transferBlocks(e.transfer)) blocking_.push_back({*begin, e.timeNs});
        }
        if (const auto wait = waits_.close(*spanKeyOf(e))) blocking_.push_back({*wait, e.timeNs});
        return;
    case EventKind::ComputeEnd:
    case EventKind::CollectiveEnd:
        if (!inStep_) return;
        if (const auto begin = open_.close(*spanKeyOf(e))) {
            (e.kind == EventKind::ComputeEnd ? compute_ : comm_).push_back({*begin, e.timeNs});
            if (e.kind == EventKind::ComputeEnd && e.phase == Phase::Forward)
                forward_.push_back({*begin, e.timeNs});
            if (e.kind == EventKind::ComputeEnd && e.phase == Phase::Backward)
                backward_.push_back({*begin, e.timeNs});
            if (e.kind == EventKind::ComputeEnd && e.phase == Phase::WeightGrad)
                weightGrad_.push_back({*begin, e.timeNs});
            if (e.kind == EventKind::CollectiveEnd && e.collective == CollectiveOp::TpAllReduce)
                blocking_.push_back({*begin, e.timeNs});
        }
        return;
    case EventKind::Alloc:
    case EventKind::Free:
        return;
    }
}

} // namespace shardscope::train
