#pragma once
// How much of a step's communication the rank's compute did NOT hide: the exposed-communication
// fraction. Per step (StepBegin .. StepEnd of one rank):
//   commUnion = |∪ collective spans|,   exposed = |∪ collective spans \ ∪ compute spans|,
//   fraction  = exposed / step duration.
// Unions, not sums of durations: two collectives that overlap in time (a prefetch running
// while another gather completes) count their common time once, and a collective that runs
// entirely under a compute span is hidden (exposed 0). A blocking collective is fully exposed;
// a prefetched all-gather (started before the current unit's compute, finished after it) is
// hidden for the time the compute covers.
//
// The exposed-transfer fraction, the same way for tier transfers (core/event.h: Transfer):
//   transferUnion = |∪ transfer spans|,
//   transferExposed = |∪ transfer spans \ (∪ compute spans \ ∪ blocking)|,
//   transferFraction = transferExposed / step duration:
// the time a transfer is in flight while the rank computes nothing. Blocking here: the rank's
// own device ↔ host copies (it does the copy, so it computes nothing meanwhile), the waits for
// NVMe transfers (TransferWait .. TransferEnd, inside the optimizer's span) and TP all-reduces.
// Collectives do not hide a transfer (the rank waits on both). docs/offload.md explains it.
//
// Note: the tracker takes the same events the ledger emits (train::Trainer's ComputeBegin/End
// and StepBegin/End, the communicators' CollectiveBegin/End), so it works whether or not those
// events are also shipped to the stream (--no-events).
#include "core/event.h"
#include "core/span_pairing.h"

#include <cstdint>
#include <span>
#include <vector>

namespace shardscope::train {

struct Span {
    std::uint64_t begin = 0; // ns, monotonic
    std::uint64_t end = 0;   // end ≥ begin; an inverted span counts as empty
};

// Sorted, disjoint, non-empty spans covering exactly the union of `spans`.
std::vector<Span> mergeSpans(std::span<const Span> spans);
// |∪ spans|.
std::uint64_t unionNs(std::span<const Span> spans);
// |∪ covered \ ∪ hiding|: the time inside some `covered` span and inside no `hiding` span.
std::uint64_t exposedNs(std::span<const Span> covered, std::span<const Span> hiding);

struct StepOverlap {
    std::uint64_t stepNs = 0;            // StepEnd − StepBegin
    std::uint64_t commUnionNs = 0;       // ≤ stepNs (spans are clipped to the step)
    std::uint64_t exposedNs = 0;         // ≤ commUnionNs
    std::uint64_t transferUnionNs = 0;   // ≤ stepNs
    std::uint64_t transferExposedNs = 0; // ≤ transferUnionNs
    // A pipeline stage's work (forward, backward and — a split backward's — weight-gradient
    // spans, recompute inside them): the time from
    // its first begin to its last end, the time inside some span, and each phase's. The stage's
    // bubble as a recording sees it is (workWindowNs − workNs) / stepNs: idle between its first
    // and last compute of the step.
    std::uint64_t workWindowNs = 0;
    std::uint64_t workNs = 0; // ≤ workWindowNs
    std::uint64_t forwardNs = 0, backwardNs = 0, weightGradNs = 0;
    double fraction() const { // exposedNs / stepNs, 0 for an empty step
        return stepNs > 0 ? static_cast<double>(exposedNs) / static_cast<double>(stepNs) : 0.0;
    }
    double transferFraction() const { // transferExposedNs / stepNs, 0 for an empty step
        return stepNs > 0 ? static_cast<double>(transferExposedNs) / static_cast<double>(stepNs)
                          : 0.0;
    }
};

// ∪ a \ ∪ b as sorted, disjoint, non-empty spans.
std::vector<Span> subtractSpans(std::span<const Span> a, std::span<const Span> b);

// A step's forward, backward and weight-gradient spans: the work fields of StepOverlap (clipped
// to the step).
void addWork(StepOverlap& o, std::uint64_t stepBegin, std::uint64_t stepEnd,
             std::span<const Span> forward, std::span<const Span> backward,
             std::span<const Span> weightGrad = {});

// One step from its boundaries and spans (spans are clipped to [stepBegin, stepEnd]).
// `blocking`: collectives the compute itself waits for (tensor-parallel all-reduces, called
// inside a unit's compute span): they are in `comm` too, and the compute span hides nothing
// while one runs — they sit on the critical path.
// `transfers`: tier transfers, exposed where no compute (less `blocking`) covers them; the
// blocking ones (device ↔ host copies, NVMe waits) belong in `blocking` as well.
StepOverlap stepOverlap(std::uint64_t stepBegin, std::uint64_t stepEnd, std::span<const Span> comm,
                        std::span<const Span> compute, std::span<const Span> blocking = {},
                        std::span<const Span> transfers = {});

// Over a run's steps: the median of the per-step fractions (mean of the middle two for an even
// count; 0 without steps) and the totals.
struct OverlapSummary {
    std::uint64_t stepNs = 0, commUnionNs = 0, exposedNs = 0;
    std::uint64_t transferUnionNs = 0, transferExposedNs = 0;
    double medianFraction = 0.0;
    double medianTransferFraction = 0.0;
};
OverlapSummary summarize(std::span<const StepOverlap> steps);

// Builds StepOverlap records from one rank's event sequence, pairing Begin and End events by
// core/span_pairing.h. Spans outside a step (setup, final weights) are ignored; a step abandoned
// by an exception (no StepEnd) yields no record.
class OverlapTracker {
public:
    void onEvent(const Event& e);
    const std::vector<StepOverlap>& steps() const { return steps_; }

private:
    bool inStep_ = false;
    std::uint64_t stepBegin_ = 0;
    SpanPairing<std::uint64_t>
        open_; // begin times of the open compute, collective and transfer spans
    SpanPairing<std::uint64_t>
        waits_; // TransferWait times of open transfers, by the transfer's key
    std::vector<Span> comm_, compute_, blocking_, transfers_, forward_, backward_, weightGrad_;
    std::vector<StepOverlap> steps_;
};

} // namespace shardscope::train
