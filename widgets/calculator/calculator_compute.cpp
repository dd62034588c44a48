#include "calculator/calculator_compute.h"

#include "core/error.h"
#include "plan/pipeline.h"
#include "plan/policy.h"
#include "plan/shape.h"
#include "predict/predict.h"

#include <QCoreApplication>
#include <algorithm>
#include <exception>

namespace shardscope::widgets {

using plan::Strategy;

namespace {

// Checks the GUI can phrase itself (translated); everything else is left to theory::validate.
QString precheck(const CalculatorInput& in) {
    if (!in.paramsError.isEmpty()) return in.paramsError;
    if (in.ranks < 1)
        return QCoreApplication::translate("CalculatorCompute", "N must be at least 1.");
    if (in.tensorParallel > 1 && !in.shape)
        return QCoreApplication::translate(
            "CalculatorCompute",
            "Tensor parallelism needs a model shape (a preset): it splits the heads and the MLP.");
    if (in.tensorParallel > 1 && in.ranks % in.tensorParallel != 0)
        return QCoreApplication::translate(
                   "CalculatorCompute",
                   "T = %1 does not divide N = %2: the ranks form a T × D mesh.")
            .arg(in.tensorParallel)
            .arg(in.ranks);
    if (plan::policyFor(in.strategy).usesHybridGroup() && in.tensorParallel > 1 &&
        (in.hybridGroupSize < 1 || in.ranks / in.tensorParallel % in.hybridGroupSize != 0))
        return QCoreApplication::translate(
                   "CalculatorCompute",
                   "Hybrid shard group size %1 does not divide the data-parallel ranks "
                   "D = N / T = %2: every replica group needs the same number of ranks.")
            .arg(in.hybridGroupSize)
            .arg(in.ranks / in.tensorParallel);
    if (plan::policyFor(in.strategy).usesHybridGroup() &&
        (in.hybridGroupSize < 1 ||
         in.ranks / std::max(1, in.tensorParallel) % in.hybridGroupSize != 0))
        return QCoreApplication::translate(
                   "CalculatorCompute",
                   "Hybrid shard group size %1 does not divide N = %2: every replica group needs "
                   "the same number of ranks.")
            .arg(in.hybridGroupSize)
            .arg(in.ranks);
    return {};
}

// Runs one engine call; invalid scenarios come back as a message, never as an exception.
template <class F> QString guarded(F&& f) {
    try {
        f();
        return {};
    } catch (const std::exception& e) {
        return QString::fromUtf8(e.what());
    }
}

ScalingLimits limitsFor(const CalculatorInput& in) {
    const theory::ModelStates ddp =
        theory::modelStates(scenarioFor(in, Strategy::Ddp, std::max(1, in.tensorParallel)));
    const ByteTable& t = ddp.perRank;
    ScalingLimits l;
    l.ddpBytes = static_cast<double>(t.tier(Tier::Device));
    l.zero2Limit = static_cast<double>(t.group(StateGroup::Param, Tier::Device));
    l.zero1Limit = l.zero2Limit + static_cast<double>(t.group(StateGroup::Grad, Tier::Device));
    l.paramCount = static_cast<double>(ddp.paramCount);
    return l;
}

StrategySeries seriesFor(const CalculatorInput& in, Strategy s, const std::vector<int>& ranks) {
    StrategySeries series{s, {}};
    for (int n : ranks) {
        const theory::Scenario sc = scenarioFor(in, s, n);
        ByteTable table;
        const QString err = guarded([&] {
            theory::validate(sc);
            table = theory::modelStates(sc).perRank;
        });
        if (err.isEmpty())
            series.points.push_back({n, static_cast<double>(table.tier(Tier::Device))});
    }
    return series;
}

StrategyAtN atNFor(const CalculatorInput& in, Strategy s) {
    StrategyAtN at{s, std::nullopt, {}};
    const theory::Scenario sc = scenarioFor(in, s, in.ranks);
    at.invalidReason = guarded([&] {
        theory::validate(sc);
        at.perRank = theory::modelStates(sc).perRank;
    });
    return at;
}

std::uint64_t largestUnit(const CalculatorInput& in) {
    if (in.largestLayerParams) return in.largestLayerParams;
    if (!in.shape) return 0;
    std::uint64_t largest = 0;
    for (const auto& u : plan::unitParams(*in.shape))
        largest = std::max(largest, u.params);
    return largest;
}

// DeepSpeed's estimator assumes fp16 mixed-precision Adam; ShardScope's columns use the same.
DeepSpeedComparison deepspeedFor(const CalculatorInput& in, std::uint64_t paramCount) {
    DeepSpeedComparison d;
    d.zero3 = plan::policyFor(in.strategy).shardParams;
    d.totalGpus = in.gpusPerNode * in.nodes;
    d.largestLayerParams = largestUnit(in);
    d.error = guarded([&] {
        theory::DeepSpeedInput ds;
        ds.params = paramCount;
        ds.largestLayerParams = d.largestLayerParams;
        ds.gpusPerNode = in.gpusPerNode;
        ds.nodes = in.nodes;
        d.rows = d.zero3 ? theory::deepspeedZero3AllLive(ds) : theory::deepspeedZero2AllLive(ds);
        for (const auto& row : d.rows) {
            CalculatorInput mine = in;
            mine.tensorParallel = 1; // DeepSpeed's estimators know no tensor parallelism
            mine.precision = plan::Precision{plan::PrecisionKind::MixedFp16, 12};
            mine.offload.optimizer = row.offloadOptimizer ? Tier::Host : Tier::Device;
            mine.offload.param = row.offloadParam ? Tier::Host : Tier::Device;
            const auto sc =
                scenarioFor(mine, d.zero3 ? Strategy::Zero3 : Strategy::Zero2, d.totalGpus);
            const ByteTable t = theory::modelStates(sc).perRank;
            d.shardscope.emplace_back(t.tier(Tier::Device),
                                      t.tier(Tier::Host) *
                                          static_cast<std::uint64_t>(in.gpusPerNode));
        }
    });
    return d;
}

void fillChosen(CalculatorResult& r) {
    const theory::Scenario sc = scenarioFor(r.input, r.input.strategy, r.input.ranks);
    r.error = guarded([&] {
        theory::validate(sc);
        r.states = theory::modelStates(sc);
        r.comm = theory::commPerStep(sc);
    });
    if (!r.error.isEmpty()) return;
    // The peak needs activations; a bare count has none, and the engine may decline.
    theory::PeakPrediction peak;
    if (guarded([&] { peak = predict::predictPeak(sc); }).isEmpty()) r.peak = peak;
    // A model config's units: the closed form's gathered term uses their real sizes.
    else if (!sc.units.empty() && guarded([&] { peak = theory::closedFormPeak(sc); }).isEmpty())
        r.peak = peak;
}

} // namespace

TrafficSplit splitTraffic(const theory::CommPerStep& comm) {
    TrafficSplit t;
    for (const auto& v : comm.byKind) {
        if (v.kind == CollectiveOp::TpAllReduce) {
            t.tpSentBytes += v.sentBytes;
            t.tpCalls += v.calls;
        } else if (v.kind == CollectiveOp::PipeSend || v.kind == CollectiveOp::PipeRecv) {
            t.ppSentBytes += v.sentBytes;
            t.ppCalls += v.calls;
        } else {
            t.dpSentBytes += v.sentBytes;
            t.dpCalls += v.calls;
        }
    }
    return t;
}

std::vector<MeshPoint> meshSweep(const CalculatorInput& in) {
    std::vector<MeshPoint> out;
    if (!in.shape || in.ranks < 1) return out;
    const int maxStages = std::min<std::int64_t>(in.shape->layers, plan::kMaxPipeStages);
    for (int p = 1; p <= std::min(in.ranks, maxStages); ++p) {
        if (in.ranks % p != 0) continue;
        const int perStage = in.ranks / p;
        for (int t = 1; t <= perStage; ++t) {
            if (perStage % t != 0 || in.shape->heads % t != 0 || (4 * in.shape->dModel) % t != 0)
                continue;
            CalculatorInput mine = in;
            mine.tensorParallel = t;
            // One stage's scenario: D ranks of one TP slice of its units.
            theory::Scenario sc = scenarioFor(mine, in.strategy, perStage);
            sc.pipeStages = p;
            MeshPoint m{p, t, perStage / t, 0, {}, {}};
            const QString err = guarded([&] {
                for (int s = 0; s < p; ++s) {
                    sc.pipeStage = s;
                    theory::validate(sc);
                    const ByteTable states = theory::modelStates(sc).perRank;
                    if (s == 0 || states.tier(Tier::Device) > m.perRank.tier(Tier::Device)) {
                        m.perRank = states;
                        m.stage = s;
                        m.traffic = splitTraffic(theory::commPerStep(sc));
                    }
                }
            });
            if (err.isEmpty()) out.push_back(m); // e.g. a hybrid group that does not divide D
        }
    }
    return out;
}

std::vector<int> sweepRanks(int chosen) {
    std::vector<int> ranks;
    for (int n = 1; n <= 1024; n *= 2)
        ranks.push_back(n);
    if (chosen >= 1) ranks.push_back(chosen);
    std::sort(ranks.begin(), ranks.end());
    ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
    return ranks;
}

theory::Scenario scenarioFor(const CalculatorInput& in, Strategy s, int ranks) {
    theory::Scenario sc;
    sc.shape = in.shape;
    sc.params = in.params;
    sc.units = in.units;
    sc.strategy = s;
    sc.ranks = ranks;
    if (sc.shape &&
        in.tensorParallel > 1) { // a T × D mesh: D ranks of one TP slice (0: T does not divide N)
        sc.shape->tp = in.tensorParallel;
        sc.ranks = ranks % in.tensorParallel == 0 ? ranks / in.tensorParallel : 0;
    }
    sc.precision = in.precision;
    sc.offload = in.offload;
    if (!plan::policyFor(s).shardParams) sc.offload.param = Tier::Device;
    sc.knobs.hybridGroupSize = plan::policyFor(s).usesHybridGroup() ? in.hybridGroupSize : 0;
    return sc;
}

std::shared_ptr<const CalculatorResult> computeCalculator(const CalculatorInput& in) {
    auto r = std::make_shared<CalculatorResult>();
    r->input = in;
    r->error = precheck(in);
    if (r->error.isEmpty()) fillChosen(*r);
    if (!r->error.isEmpty()) return r;

    r->sweepRanks = sweepRanks(in.ranks);
    // DDP may reject the input's offload; then the chart simply has no limit lines.
    (void)guarded([&] { r->limits = limitsFor(in); });
    for (Strategy s : plan::allStrategies()) {
        r->series.push_back(seriesFor(in, s, r->sweepRanks));
        r->atN.push_back(atNFor(in, s));
    }
    r->deepspeed =
        deepspeedFor(in, in.shape ? plan::modelParamCount(*in.shape) : r->states.paramCount);
    r->traffic = splitTraffic(r->comm);
    r->meshes = meshSweep(in);
    if (!in.shape)
        r->meshNote = QCoreApplication::translate(
            "CalculatorCompute",
            "Tensor parallelism needs a model shape (a preset): it splits the heads and the MLP.");
    return r;
}

} // namespace shardscope::widgets
