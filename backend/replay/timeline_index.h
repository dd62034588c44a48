#pragma once
// The timeline's data, pre-built once per run so a repaint never walks raw events: per rank
// (lane) the compute spans, the collectives, the lifetimes of gathered parameters (param_full)
// and the tier transfers (device ↔ host copies, NVMe reads and writes), each sorted by begin time
// with a running maximum of end times for binary search, and the rank's live-bytes curve. Plus the
// level-of-detail layout: the boxes to draw for a time window at a pixel width, with spans narrower
// than ~2 px merged into summary boxes, and the memory curve reduced to min/max per pixel column.
// Pure C++ (no widgets) so the tests and the benchmark drive exactly what the view paints.
//
// Times are on the replay clock of ReplayModel (each step's real timestamps, steps back to
// back), so a playhead index and a timeline position convert through the model.
#include "core/span_pairing.h"
#include "replay/replay_model.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace shardscope::replay {

enum class SpanKind : std::uint8_t {
    Forward,
    Backward,
    Recompute,
    Optimizer, // compute row
    AllGather,
    ReduceScatter,
    AllReduce,
    Broadcast,   // communication row
    ParamFull,   // buffer row: a gathered unit's lifetime
    TpAllReduce, // communication row: tensor parallelism's
    Save,        // compute row: writing a checkpoint
    DeviceToHost,
    HostToDevice,
    NvmeRead,
    NvmeWrite, // transfer row: offloaded state crossing tiers
    PipeSend,
    PipeRecv,   // communication row: pipeline stages' messages
    WeightGrad, // compute row: a split backward's weight gradients (zb1's W)
};
inline constexpr std::size_t kSpanKindCount = 18;

enum class TimelineRow : std::uint8_t { Compute, Comm, Buffers, Transfers };
inline constexpr std::size_t kTimelineRowCount = 4;
// Nested / overlapping spans of one row stack in sub-rows (recompute inside backward; a
// prefetched unit's buffer beside the current one). Deeper overlaps share the last sub-row.
inline constexpr std::uint8_t kMaxDepth = 3;

// What each span kind is: its row and the one Phase, CollectiveOp or Transfer it shows (a
// buffer's lifetime shows none), and its name in exports (Perfetto's event names).
// Note: kSpanKinds is in SpanKind's order (static_assert below); every mapping between a span
// kind and the event vocabulary reads this table, so a new phase, collective or transfer is
// one row here.
struct SpanKindTraits {
    SpanKind kind;
    TimelineRow row;
    Phase phase = Phase::None;            // Compute
    CollectiveOp op = CollectiveOp::None; // Comm
    Transfer transfer = Transfer::None;   // Transfers
    std::string_view name;
};

inline constexpr std::array<SpanKindTraits, kSpanKindCount> kSpanKinds = {{
    {SpanKind::Forward, TimelineRow::Compute, Phase::Forward, {}, {}, phaseName(Phase::Forward)},
    {SpanKind::Backward, TimelineRow::Compute, Phase::Backward, {}, {}, phaseName(Phase::Backward)},
    {SpanKind::Recompute,
     TimelineRow::Compute,
     Phase::Recompute,
     {},
     {},
     phaseName(Phase::Recompute)},
    {SpanKind::Optimizer,
     TimelineRow::Compute,
     Phase::Optimizer,
     {},
     {},
     phaseName(Phase::Optimizer)},
    {SpanKind::AllGather,
     TimelineRow::Comm,
     {},
     CollectiveOp::AllGather,
     {},
     collectiveOpName(CollectiveOp::AllGather)},
    {SpanKind::ReduceScatter,
     TimelineRow::Comm,
     {},
     CollectiveOp::ReduceScatter,
     {},
     collectiveOpName(CollectiveOp::ReduceScatter)},
    {SpanKind::AllReduce,
     TimelineRow::Comm,
     {},
     CollectiveOp::AllReduce,
     {},
     collectiveOpName(CollectiveOp::AllReduce)},
    {SpanKind::Broadcast,
     TimelineRow::Comm,
     {},
     CollectiveOp::Broadcast,
     {},
     collectiveOpName(CollectiveOp::Broadcast)},
    {SpanKind::ParamFull, TimelineRow::Buffers, {}, {}, {}, "param_full"},
    {SpanKind::TpAllReduce,
     TimelineRow::Comm,
     {},
     CollectiveOp::TpAllReduce,
     {},
     collectiveOpName(CollectiveOp::TpAllReduce)},
    {SpanKind::Save, TimelineRow::Compute, Phase::Save, {}, {}, "checkpoint_save"},
    {SpanKind::DeviceToHost,
     TimelineRow::Transfers,
     {},
     {},
     Transfer::DeviceToHost,
     transferName(Transfer::DeviceToHost)},
    {SpanKind::HostToDevice,
     TimelineRow::Transfers,
     {},
     {},
     Transfer::HostToDevice,
     transferName(Transfer::HostToDevice)},
    {SpanKind::NvmeRead,
     TimelineRow::Transfers,
     {},
     {},
     Transfer::NvmeRead,
     transferName(Transfer::NvmeRead)},
    {SpanKind::NvmeWrite,
     TimelineRow::Transfers,
     {},
     {},
     Transfer::NvmeWrite,
     transferName(Transfer::NvmeWrite)},
    {SpanKind::PipeSend,
     TimelineRow::Comm,
     {},
     CollectiveOp::PipeSend,
     {},
     collectiveOpName(CollectiveOp::PipeSend)},
    {SpanKind::PipeRecv,
     TimelineRow::Comm,
     {},
     CollectiveOp::PipeRecv,
     {},
     collectiveOpName(CollectiveOp::PipeRecv)},
    {SpanKind::WeightGrad,
     TimelineRow::Compute,
     Phase::WeightGrad,
     {},
     {},
     phaseName(Phase::WeightGrad)},
}};

constexpr bool spanKindsInEnumOrder() {
    for (std::size_t i = 0; i < kSpanKinds.size(); ++i)
        if (static_cast<std::size_t>(kSpanKinds[i].kind) != i) return false;
    return true;
}
static_assert(spanKindsInEnumOrder(), "kSpanKinds lists every SpanKind once, in the enum's order");

constexpr const SpanKindTraits& traitsOf(SpanKind k) {
    return kSpanKinds[static_cast<std::size_t>(k)];
}
constexpr TimelineRow rowOf(SpanKind k) {
    return traitsOf(k).row;
}
constexpr bool isCollective(SpanKind k) {
    return traitsOf(k).op != CollectiveOp::None;
}
constexpr bool isTransfer(SpanKind k) {
    return traitsOf(k).transfer != Transfer::None;
}
// The span kind that shows a phase, a collective or a transfer (None: Forward, AllGather and
// DeviceToHost, as a damaged recording's spans are drawn).
SpanKind spanKindOf(Phase p);
SpanKind spanKindOf(CollectiveOp c);
SpanKind spanKindOf(Transfer t);

struct TimelineSpan {
    std::uint64_t beginNs = 0; // replay clock
    std::uint64_t endNs = 0;
    std::uint64_t beginEvent = 0; // global event index of the opening event (Begin / Alloc)
    std::uint64_t endEvent = 0;   // … and of the closing one (End / Free)
    std::uint64_t bytes = 0;      // collective payload, the buffer's size, or the bytes transferred
    std::int32_t unit = kNoUnit;
    std::int32_t peers = 0; // collectives: the group size
    SpanKind kind = SpanKind::Forward;
    std::uint8_t depth = 0;
    std::int16_t microBatch = -1; // the opening event's (core/event.h)
    std::uint64_t durationNs() const { return endNs - beginNs; }
};

// Time a rank sat idle inside the step's work, as the textbook counts a pipeline's bubble: the
// window runs from the step's first forward on any rank to its last backward on any rank (the
// schedule's makespan), and a rank is idle wherever it runs no forward, backward or weight-gradient
// span (outermost) inside it: the pipeline's fill and drain, waits for a neighbour's activation or
// gradient, its data-parallel collectives. (The report's per-stage note measures between the
// stage's own first and last compute, as the run's theory schedules it.)
struct IdleGap {
    std::uint64_t beginNs = 0;
    std::uint64_t endNs = 0;
};

// A moment a rank waited on a tier transfer it needed (Event::TransferWait: the NVMe read of the
// state the CPU optimizer is about to update had not finished): exposed transfer time.
struct TransferWaitMark {
    std::uint64_t ns = 0;    // replay clock
    std::uint64_t event = 0; // global event index
    Transfer transfer = Transfer::None;
    std::int32_t unit = kNoUnit;
    std::uint64_t bytes = 0;
};

struct TimelineLane {
    std::array<std::vector<TimelineSpan>, kTimelineRowCount> rows;    // sorted by beginNs
    std::vector<TransferWaitMark> waits;                              // in replay order
    std::array<std::vector<std::uint64_t>, kTimelineRowCount> maxEnd; // running max of endNs
    std::vector<std::uint64_t> memNs;    // after each alloc/free: when …
    std::vector<std::uint64_t> memBytes; // … and the rank's live total then
    std::uint64_t peakBytes = 0;
    std::vector<IdleGap> idle;    // in time order
    std::uint64_t idleNs = 0;     // their sum
    std::vector<double> stepIdle; // per step: idle ÷ the step's window
    // A pipeline stage's measured bubble: the median step's share, the first step left out when
    // there are more (it carries one-off allocation and warm-up); nullopt before any work.
    std::optional<double> idleFraction() const;
};

// nccl-tests' bandwidths in bytes per second: algbw = bytes / time; busbw = algbw × the
// collective's factor (plan/collective.h).
double algBandwidth(std::uint64_t bytes, std::uint64_t ns);
double busBandwidth(SpanKind kind, std::uint64_t bytes, std::uint64_t ns, int peers);

class TimelineIndex {
public:
    void reset(int worldSize);
    // Indexes steps [indexedSteps(), model.stepCount()): call again as a live run grows.
    void update(const ReplayModel& model);
    std::size_t indexedSteps() const { return steps_; }

    int laneCount() const { return static_cast<int>(lanes_.size()); }
    const TimelineLane& lane(int rank) const { return lanes_[static_cast<std::size_t>(rank)]; }
    std::uint64_t endNs() const { return endNs_; }    // replay clock at the last event
    std::uint64_t peakBytes() const { return peak_; } // highest live total of any rank
    std::size_t spanCount() const;
    bool hasTransfers() const;      // any lane's transfer row holds a span (the view adds that row)
    bool hasKind(SpanKind k) const; // some span of this kind was indexed (the legend lists it)

    // Index of the first span of (rank,row) that may overlap [t, …): its end ≥ t.
    std::size_t firstEndingAtOrAfter(int rank, TimelineRow row, std::uint64_t t) const;
    // The innermost span of (rank,row) whose [begin − slack, end + slack] holds t.
    std::optional<std::size_t> spanAt(int rank, TimelineRow row, std::uint64_t t,
                                      std::uint64_t slackNs) const;

private:
    struct Open {
        std::uint64_t ns, event, bytes;
        std::int32_t unit, peers;
        SpanKind kind;
        std::uint8_t depth;
        std::int16_t micro = -1;
    };
    struct RankBuild {
        SpanPairing<Open> compute;     // open compute spans: their count is the next one's depth
        SpanPairing<Open> collectives; // open collectives (a prefetch's all-gather beside others)
        SpanPairing<Open> buffers;     // open param_full, any unit
        SpanPairing<Open> transfers;   // open tier transfers (an NVMe read beside a write)
        RankState ledger;
        std::array<std::vector<TimelineSpan>, kTimelineRowCount> fresh; // closed this update
    };
    void close(int rank, TimelineRow row, const Open& o, std::uint64_t ns, std::uint64_t event);
    void merge(TimelineLane& lane, RankBuild& b);
    void addIdle(const ReplayModel& model);

    std::vector<TimelineLane> lanes_;
    std::vector<RankBuild> build_;
    std::size_t steps_ = 0;
    std::uint64_t endNs_ = 0;
    std::uint64_t peak_ = 0;
    std::uint32_t kinds_ = 0; // bit k: a span of SpanKind k was closed
    static_assert(kSpanKindCount <= 32);
};

// ---- level of detail ----

struct TimeWindow {
    double t0 = 0, t1 = 1; // replay ns at the left and right edge
    double widthPx = 1;
    double xOf(double t) const { return (t - t0) / (t1 - t0) * widthPx; }
    double tOf(double x) const { return t0 + x / widthPx * (t1 - t0); }
    double nsPerPx() const { return (t1 - t0) / widthPx; }
};

struct DrawBox {
    double x0 = 0, x1 = 0; // pixels from the window's left edge
    TimelineRow row = TimelineRow::Compute;
    std::uint8_t depth = 0;
    SpanKind kind = SpanKind::Forward; // single span; for a summary, the kind covering most time
    std::uint32_t merged = 1;          // spans in this box (1: a real span, drawn with detail)
    std::size_t span = 0;              // index into the row when merged == 1
};

inline constexpr double kMinBoxPx = 2.0;
// The boxes of one lane visible in `w`, every row. Spans narrower than minPx are merged with
// their neighbours of the same row and depth while the gap between them is under minPx, so at
// any zoom a row yields at most about widthPx / minPx boxes per depth.
void layoutLane(const TimelineLane& lane, const TimeWindow& w, std::vector<DrawBox>& out,
                double minPx = kMinBoxPx);

// Memory curve per pixel column: the min and max live bytes the column covers (the value
// carried in from the left included), or empty columns before the first sample.
struct MemColumn {
    std::uint64_t lo = 0, hi = 0;
    bool valid = false;
};
void memoryColumns(const TimelineLane& lane, const TimeWindow& w, int columns,
                   std::vector<MemColumn>& out);

} // namespace shardscope::replay
