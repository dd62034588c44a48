#pragma once
// The calculator's data: one immutable CalculatorResult per input, computed entirely by the
// theory engine. Widgets only draw a result; they never call the engine themselves, so the
// page can later receive results from a worker process instead.
#include "theory/deepspeed.h"
#include "theory/estimate.h"

#include <QString>
#include <memory>
#include <optional>
#include <vector>

namespace shardscope::widgets {

struct CalculatorInput {
    std::optional<plan::GptShape> shape;  // preset with a shape
    std::uint64_t params = 0;             // bare parameter count when shape is empty
    std::vector<plan::UnitParams> units;  // a model config's own units (Σ = params), else empty
    std::uint64_t largestLayerParams = 0; // DeepSpeed's largest layer of a model config
    QString paramsError;                  // the form could not parse the count (shown as is)
    plan::Strategy strategy = plan::Strategy::Zero3;
    int ranks = 64;
    int hybridGroupSize = 8;
    // Tensor parallel T (with a shape): N = T × D; the theory's ranks are D and its shape one TP
    // slice, so per-rank states and the communication (TP and DP kinds) are the mesh's.
    int tensorParallel = 1;
    plan::Precision precision{};
    plan::Offload offload{};
    int gpusPerNode = 8; // DeepSpeed estimator inputs
    int nodes = 8;
};

struct ScalingPoint {
    int ranks = 0;
    double deviceBytes = 0; // model states per rank on the device tier
};
struct StrategySeries {
    plan::Strategy strategy;
    std::vector<ScalingPoint> points; // sweep ranks where the scenario is valid
};

// Where each stage's per-rank bytes go as N grows: ZeRO-1 keeps params + grads whole, ZeRO-2
// keeps params whole, ZeRO-3 shards everything (DDP / N). Read off DDP's own ledger at N = 1.
struct ScalingLimits {
    double ddpBytes = 0;
    double zero1Limit = 0; // DDP's param + grad groups
    double zero2Limit = 0; // DDP's param group
    double paramCount = 0;
};

struct StrategyAtN {
    plan::Strategy strategy;
    std::optional<ByteTable> perRank; // empty when this strategy is invalid at N
    QString invalidReason;
};

struct DeepSpeedComparison {
    bool zero3 = false;
    int totalGpus = 0;
    std::uint64_t largestLayerParams = 0;
    std::vector<theory::DeepSpeedRow> rows;
    // ShardScope's per-rank device bytes and per-node host bytes for each row's offload setting.
    std::vector<std::pair<std::uint64_t, std::uint64_t>> shardscope;
    QString error;
};

// Communication per rank per step split by the group it crosses: the TP all-reduces over the TP
// group (T ranks), a pipeline's messages to the neighbouring stages, everything else over the DP
// group (D ranks). Sums of theory's CommPerStep.
struct TrafficSplit {
    std::uint64_t tpSentBytes = 0, dpSentBytes = 0, ppSentBytes = 0;
    int tpCalls = 0, dpCalls = 0, ppCalls = 0;
};
TrafficSplit splitTraffic(const theory::CommPerStep& comm);

// One (P, T, D) of a fixed world size N = P × T × D: the chosen strategy's per-rank model states
// and traffic there, from the same theory the run uses (one TP slice of one stage's units over D
// ranks). With P > 1, the fullest stage's ranks (the most model states on the device): the
// stage a device budget has to hold.
struct MeshPoint {
    int pp = 1, tp = 1, dp = 1;
    int stage = 0; // the fullest stage (P > 1)
    ByteTable perRank;
    TrafficSplit traffic;
};

struct CalculatorResult {
    CalculatorInput input;
    QString error; // non-empty: the chosen scenario is invalid; nothing below is filled
    std::vector<int> sweepRanks;
    std::vector<StrategySeries> series;
    ScalingLimits limits;
    std::vector<StrategyAtN> atN;
    theory::ModelStates states; // chosen strategy at the chosen N
    theory::CommPerStep comm;
    std::optional<theory::PeakPrediction> peak;
    DeepSpeedComparison deepspeed;
    TrafficSplit traffic;          // comm split into TP and DP traffic
    std::vector<MeshPoint> meshes; // every (P, T) the mesh sweep allows (with a shape)
    QString meshNote;              // why there are no mesh points (no shape), else empty
};

// Every (P, T, D = N / (P·T)) the model allows: P divides N and leaves each stage a layer, T
// divides N / P, the heads and the MLP width; P = 1 first, T ascending; states by theory.
std::vector<MeshPoint> meshSweep(const CalculatorInput& in);

// Ranks of the scaling sweep: powers of two 1..1024 plus the chosen N (at most 13 points).
std::vector<int> sweepRanks(int chosen);

// The scenario the engine sees for a strategy at a rank count: the input's model, precision and
// offload, with param offload dropped for strategies that never shard params.
theory::Scenario scenarioFor(const CalculatorInput& in, plan::Strategy s, int ranks);

std::shared_ptr<const CalculatorResult> computeCalculator(const CalculatorInput& in);

} // namespace shardscope::widgets
