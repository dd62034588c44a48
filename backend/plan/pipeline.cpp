#include "plan/pipeline.h"

#include "core/error.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace shardscope::plan {

std::optional<PipeSchedule> pipeScheduleFromFlag(std::string_view flag) {
    for (const PipeScheduleTraits& t : kPipeScheduleTraits)
        if (t.flag == flag) return t.kind;
    return std::nullopt;
}

std::string validatePipe(PipeSchedule schedule, const PipeShape& shape, int layers) {
    const PipeScheduleTraits& t = traits(schedule);
    const int p = shape.stages, m = shape.microBatches, v = shape.virtualStages;
    if (p < 1 || p > kMaxPipeStages)
        return "--pp " + std::to_string(p) + ": pipeline stages are 1 to " +
               std::to_string(kMaxPipeStages);
    if (m < 1 || m > kMaxMicroBatches)
        return "--micro-batches " + std::to_string(m) + ": a step has 1 to " +
               std::to_string(kMaxMicroBatches) + " micro-batches";
    if (v < 1 || v > kMaxVirtualStages)
        return "--virtual-stages " + std::to_string(v) + ": 1 to " +
               std::to_string(kMaxVirtualStages) + " model chunks per rank";
    if (v > 1 && !t.virtualStages)
        return "--virtual-stages " + std::to_string(v) + ": the " + std::string(t.flag) +
               " schedule has no virtual stages (only interleaved has)";
    if (t.virtualStages && v < 2)
        return "--pp-schedule interleaved needs --virtual-stages of at least 2 (with one chunk "
               "per rank it is 1f1b)";
    if (static_cast<long long>(p) * v > layers)
        return "--pp " + std::to_string(p) +
               (v > 1 ? " × --virtual-stages " + std::to_string(v) : std::string()) + " = " +
               std::to_string(p * v) + " stages for a model of " + std::to_string(layers) +
               " layers: every stage needs a layer";
    if (t.microBatchesByStages && m % p != 0)
        return "--pp-schedule " + std::string(t.flag) +
               " needs --micro-batches (--grad-accum) to be a multiple of "
               "--pp (M = " +
               std::to_string(m) + ", P = " + std::to_string(p) + ")";
    return {};
}

std::vector<int> stageFirstLayers(int layers, int virtualStagesInAll) {
    std::vector<int> first(static_cast<std::size_t>(virtualStagesInAll) + 1, 0);
    const int base = layers / virtualStagesInAll, extra = layers % virtualStagesInAll;
    for (int i = 0; i < virtualStagesInAll; ++i)
        first[static_cast<std::size_t>(i) + 1] =
            first[static_cast<std::size_t>(i)] + base + (i < extra ? 1 : 0);
    return first;
}

StageUnits stageUnits(int layers, int stages, int stage) {
    return stageChunks(layers, stages, 1, stage).front();
}

std::vector<StageUnits> stageChunks(int layers, int stages, int virtualStages, int stage) {
    if (stages < 1 || virtualStages < 1 || stage < 0 || stage >= stages ||
        static_cast<long long>(stages) * virtualStages > layers)
        throw Error(ErrorKind::Internal, "stageChunks: stage " + std::to_string(stage) + " of " +
                                             std::to_string(stages) + " × " +
                                             std::to_string(virtualStages) + " over " +
                                             std::to_string(layers) + " layers");
    const int all = stages * virtualStages;
    const std::vector<int> first = stageFirstLayers(layers, all);
    std::vector<StageUnits> chunks;
    for (int c = 0; c < virtualStages; ++c) {
        const int k = c * stages + stage;
        const auto ku = static_cast<std::size_t>(k);
        // Block l is unit l + 1; the embedding (unit 0) joins virtual stage 0, the head (L + 1)
        // the last.
        chunks.push_back(
            {k == 0 ? 0 : first[ku] + 1, k + 1 == all ? layers + 2 : first[ku + 1] + 1});
    }
    return chunks;
}

namespace {

using Order = std::vector<std::vector<PipeOp>>;

PipeOp fwd(int mb, int chunk = 0) {
    return {PipeOpKind::Forward, mb, chunk};
}
PipeOp bwd(int mb, int chunk = 0) {
    return {PipeOpKind::Backward, mb, chunk};
}

// 1F1B (PipeDream-Flush): P − s − 1 forwards to fill the pipe, then one forward and one backward
// in turn, then the backwards left; a stage holds at most P − s micro-batches' activations.
std::vector<PipeOp> oneFOneB(int p, int m, int s) {
    std::vector<PipeOp> ops;
    const int warmup = std::min(p - s - 1, m);
    for (int i = 0; i < warmup; ++i)
        ops.push_back(fwd(i));
    for (int i = 0; i < m - warmup; ++i) {
        ops.push_back(fwd(warmup + i));
        ops.push_back(bwd(i));
    }
    for (int i = m - warmup; i < m; ++i)
        ops.push_back(bwd(i));
    return ops;
}

// Megatron-LM's interleaved schedule: the k-th forward of a rank is chunk (k mod P·V) / P of
// micro-batch (k / P·V)·P + k mod P (P micro-batches through chunk 0, then the same P through
// chunk 1, …); backwards run the chunks in reverse. Warm-up: 2(P − s − 1) + (V − 1)·P forwards
// (every one when M = P), then one forward and one backward in turn.
std::vector<PipeOp> interleaved(int p, int m, int v, int s) {
    const int total = m * v, group = p * v;
    const auto at = [&](int k, bool forward) {
        int chunk = (k % group) / p;
        if (!forward) chunk = v - 1 - chunk;
        return PipeOp{forward ? PipeOpKind::Forward : PipeOpKind::Backward, (k / group) * p + k % p,
                      chunk};
    };
    const int warmup = m == p ? total : std::min(2 * (p - s - 1) + (v - 1) * p, total);
    std::vector<PipeOp> ops;
    for (int k = 0; k < warmup; ++k)
        ops.push_back(at(k, true));
    for (int k = 0; k < total - warmup; ++k) {
        ops.push_back(at(warmup + k, true));
        ops.push_back(at(k, false));
    }
    for (int k = total - warmup; k < total; ++k)
        ops.push_back(at(k, false));
    return ops;
}

// ZB-H1 (Qi et al., "Zero Bubble Pipeline Parallelism", 2024; its authors' Megatron schedule):
// the backward split into B (input gradients, which the previous stage waits for) and W (weight
// gradients, which nobody waits for). Stage s runs, for x = 0 … M + P − 2, the forward of x, the
// B of x − (P − 1 − s) and the W of x − (P − 1), each where it exists: 1F1B's forwards and Bs,
// each W as late as its stage's distance from the first allows: stage 0 runs every W right after
// its B, stage s defers its Ws by s places and fills its drain with them, where 1F1B's stage
// would wait. A micro-batch's activations
// are held from its F to its W: at most P at once on every stage (1F1B's peak, stage 0's), and
// the bubble shrinks to (P − 1)(F + B − W) once M ≥ P.
std::vector<PipeOp> zeroBubbleH1(int p, int m, int s) {
    std::vector<PipeOp> ops;
    for (int x = 0; x < m + p - 1; ++x) {
        if (x < m) ops.push_back(fwd(x));
        if (const int b = x - (p - 1 - s); b >= 0 && b < m) ops.push_back(bwd(b));
        if (const int w = x - (p - 1); w >= 0 && w < m)
            ops.push_back({PipeOpKind::WeightGrad, w, 0});
    }
    return ops;
}

} // namespace

std::vector<std::vector<PipeOp>> pipeOrder(PipeSchedule schedule, const PipeShape& shape) {
    const std::string problem = validatePipe(schedule, shape, kMaxPipeStages * kMaxVirtualStages);
    if (!problem.empty()) throw Error(ErrorKind::Internal, "pipeOrder: " + problem);
    const int p = shape.stages, m = shape.microBatches, v = shape.virtualStages;
    Order order(static_cast<std::size_t>(p));
    switch (schedule) {
    case PipeSchedule::GPipe:
        for (auto& ops : order) {
            for (int i = 0; i < m; ++i)
                ops.push_back(fwd(i));
            for (int i = 0; i < m; ++i)
                ops.push_back(bwd(i));
        }
        return order;
    case PipeSchedule::OneFOneB:
        for (int s = 0; s < p; ++s)
            order[static_cast<std::size_t>(s)] = oneFOneB(p, m, s);
        return order;
    case PipeSchedule::Interleaved:
        for (int s = 0; s < p; ++s)
            order[static_cast<std::size_t>(s)] = interleaved(p, m, v, s);
        return order;
    case PipeSchedule::ZeroBubbleH1:
        for (int s = 0; s < p; ++s)
            order[static_cast<std::size_t>(s)] = zeroBubbleH1(p, m, s);
        return order;
    }
    throw Error(ErrorKind::Internal, "pipeOrder: unknown schedule");
}

double PipeRun::bubble(int stage) const {
    return makespan > 0 ? 1.0 - busy[static_cast<std::size_t>(stage)] / makespan : 0.0;
}

double PipeRun::innerIdle(int stage) const {
    const auto& spans = ops[static_cast<std::size_t>(stage)];
    if (spans.empty() || makespan <= 0) return 0.0;
    return (spans.back().end - spans.front().begin - busy[static_cast<std::size_t>(stage)]) /
           makespan;
}

PipeRun runPipe(const PipeShape& shape, bool splitBackward,
                const std::vector<std::vector<PipeOp>>& order, const PipeOpTimes& times) {
    const int p = shape.stages, m = shape.microBatches, v = shape.virtualStages;
    const int vstages = p * v;
    if (static_cast<int>(order.size()) != p)
        throw Error(ErrorKind::Internal, "runPipe: an order for " + std::to_string(order.size()) +
                                             " stages, the shape has " + std::to_string(p));
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const auto table = [&] {
        return std::vector<std::vector<double>>(
            static_cast<std::size_t>(vstages),
            std::vector<double>(static_cast<std::size_t>(m), nan));
    };
    auto fEnd = table(), bEnd = table(), wEnd = table();
    const double tf = times.forward / v,
                 tb = (splitBackward ? times.backward : times.backward + times.weightGrad) / v,
                 tw = times.weightGrad / v;
    PipeRun run;
    run.ops.resize(static_cast<std::size_t>(p));
    run.busy.assign(static_cast<std::size_t>(p), 0.0);
    run.peakInFlight.assign(static_cast<std::size_t>(p), 0);
    std::vector<std::size_t> next(static_cast<std::size_t>(p), 0);
    std::vector<double> freeAt(static_cast<std::size_t>(p), 0.0);
    std::vector<int> held(static_cast<std::size_t>(p), 0);
    for (int s = 0; s < p; ++s)
        for (const PipeOp& op : order[static_cast<std::size_t>(s)])
            if (op.microBatch < 0 || op.microBatch >= m || op.chunk < 0 || op.chunk >= v ||
                (op.kind == PipeOpKind::WeightGrad && !splitBackward))
                throw Error(ErrorKind::Internal,
                            "runPipe: stage " + std::to_string(s) + " has an op outside the shape");
    for (bool progress = true; progress;) {
        progress = false;
        for (int s = 0; s < p; ++s) {
            const auto su = static_cast<std::size_t>(s);
            while (next[su] < order[su].size()) {
                const PipeOp& op = order[su][next[su]];
                const int k = op.chunk * p + s; // virtual stage
                const auto ku = static_cast<std::size_t>(k),
                           mb = static_cast<std::size_t>(op.microBatch);
                double ready = freeAt[su];
                bool known = true;
                const auto need = [&](double end) {
                    if (std::isnan(end))
                        known = false;
                    else
                        ready = std::max(ready, end);
                };
                double duration = 0;
                std::vector<std::vector<double>>* into = nullptr;
                switch (op.kind) {
                case PipeOpKind::Forward:
                    if (k > 0) need(fEnd[ku - 1][mb]);
                    duration = tf;
                    into = &fEnd;
                    break;
                case PipeOpKind::Backward:
                    need(fEnd[ku][mb]);
                    if (k < vstages - 1) need(bEnd[ku + 1][mb]);
                    duration = tb;
                    into = &bEnd;
                    break;
                case PipeOpKind::WeightGrad:
                    need(bEnd[ku][mb]);
                    duration = tw;
                    into = &wEnd;
                    break;
                }
                if (!known) break;
                if (!std::isnan((*into)[ku][mb]))
                    throw Error(ErrorKind::Internal,
                                "runPipe: stage " + std::to_string(s) + " runs an op twice");
                (*into)[ku][mb] = ready + duration;
                run.ops[su].push_back({op, ready, ready + duration});
                run.busy[su] += duration;
                freeAt[su] = ready + duration;
                if (op.kind == PipeOpKind::Forward)
                    run.peakInFlight[su] = std::max(run.peakInFlight[su], ++held[su]);
                else if (op.kind == PipeOpKind::WeightGrad || !splitBackward)
                    --held[su];
                run.makespan = std::max(run.makespan, ready + duration);
                ++next[su];
                progress = true;
            }
        }
    }
    for (int s = 0; s < p; ++s) {
        const auto su = static_cast<std::size_t>(s);
        if (next[su] < order[su].size()) {
            const PipeOp& op = order[su][next[su]];
            run.deadlock = true;
            run.stuck = "stage " + std::to_string(s) + " waits forever at its op " +
                        std::to_string(next[su]) + " (" +
                        (op.kind == PipeOpKind::Forward    ? "forward"
                         : op.kind == PipeOpKind::Backward ? "backward"
                                                           : "weight gradients") +
                        " of micro-batch " + std::to_string(op.microBatch) + ", chunk " +
                        std::to_string(op.chunk) + ")";
            break;
        }
    }
    return run;
}

} // namespace shardscope::plan
