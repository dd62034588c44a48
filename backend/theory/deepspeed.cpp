// DeepSpeed's estimators, line by line (deepspeed.h). Source followed: deepspeedai/DeepSpeed
// deepspeed/runtime/zero/stage_1_and_2.py estimate_zero2_model_states_mem_needs and
// deepspeed/runtime/zero/stage3.py estimate_zero3_model_states_mem_needs, plus their
// *_all_cold loops for the row order. Python evaluates left to right with exact ints until a
// float enters (then int → nearest double); we mirror that order so int() truncates the same.
#include "theory/deepspeed.h"

#include "core/error.h"
#include "theory/input_error.h"

#include <algorithm>
#include <cmath>

namespace shardscope::theory {

namespace {

constexpr double kTwoPow53 = 9007199254740992.0;
constexpr double kTwoPow64 = 18446744073709551616.0;

std::uint64_t mul(std::uint64_t a, std::uint64_t b) {
    std::uint64_t r = 0;
    if (__builtin_mul_overflow(a, b, &r))
        throwInput(InputField::Params, "DeepSpeed's estimate overflows 64 bits for these values");
    return r;
}

// Python's int / int is correctly rounded. For operands exact in a double IEEE division is
// too; beyond 2^53 the 64-bit mantissa of long double keeps the operands exact (one more
// rounding step, which can differ from Python only in the last bit of a ~2^53 quotient).
double pyTrueDiv(std::uint64_t a, std::uint64_t b) {
    if (static_cast<double>(a) <= kTwoPow53 && static_cast<double>(b) <= kTwoPow53)
        return static_cast<double>(a) / static_cast<double>(b);
    return static_cast<double>(static_cast<long double>(a) / static_cast<long double>(b));
}

// Python's int(x) for the non-negative floats these formulas produce.
std::uint64_t pyInt(double x) {
    if (!(x >= 0.0) || x >= kTwoPow64)
        throwInput(InputField::Params, "DeepSpeed's estimate overflows 64 bits for these values");
    return static_cast<std::uint64_t>(x);
}

// total_params * max(intFactor, floatFactor) * abf — Python's max returns the int unless the
// float is strictly larger, and then the product stays an exact int until abf.
double timesMax(std::uint64_t params, std::uint64_t intFactor, double floatFactor, double abf) {
    if (floatFactor > static_cast<double>(intFactor))
        return static_cast<double>(params) * floatFactor * abf;
    return static_cast<double>(mul(params, intFactor)) * abf;
}

struct Hw {
    std::uint64_t gpusPerNode;
    std::uint64_t totalGpus;
    double gpusFactor; // 1 / num_nodes
};

Hw hardware(const DeepSpeedInput& in) {
    const auto g = static_cast<std::uint64_t>(in.gpusPerNode);
    const auto n = static_cast<std::uint64_t>(in.nodes);
    return Hw{g, mul(g, n), 1.0 / static_cast<double>(n)};
}

// stage_1_and_2.py estimate_zero2_model_states_mem_needs.
DeepSpeedRow zero2Row(const DeepSpeedInput& in, bool cpuOffload) {
    const Hw hw = hardware(in);
    const std::uint64_t p = in.params;
    const double abf = in.additionalBufferFactor;
    DeepSpeedRow row;
    row.offloadOptimizer = cpuOffload;
    if (cpuOffload) {
        row.gpuBytes = mul(2, p); // gpu_mem = 2 * total_params
        row.cpuBytes =
            pyInt(timesMax(p, std::max<std::uint64_t>(mul(4, hw.totalGpus), 16), 0.0, abf));
    } else {
        // 2 = params_16bit; 18 = 16-bit grads + fp32 grads + fp32 params + Adam m, v (DeepSpeed's
        // comment)
        row.gpuBytes = mul(2, p) + pyInt(pyTrueDiv(mul(18, p), hw.totalGpus));
        row.cpuBytes = pyInt(static_cast<double>(mul(mul(p, 4), hw.gpusPerNode)) * abf);
    }
    return row;
}

// stage3.py estimate_zero3_model_states_mem_needs.
DeepSpeedRow zero3Row(const DeepSpeedInput& in, bool cpuOffload, bool offloadParams,
                      bool zeroInit) {
    const Hw hw = hardware(in);
    const std::uint64_t p = in.params;
    const double abf = in.additionalBufferFactor;
    const std::uint64_t largestLayerBytes = mul(4, in.largestLayerParams);
    const std::uint64_t fourG = mul(4, hw.gpusPerNode);
    DeepSpeedRow row{offloadParams, cpuOffload, zeroInit, 0, 0};
    if (cpuOffload && offloadParams) {
        row.gpuBytes = largestLayerBytes;
        row.cpuBytes = pyInt(zeroInit ? static_cast<double>(mul(p, 18)) * hw.gpusFactor * abf
                                      : timesMax(p, fourG, 18 * hw.gpusFactor, abf));
    } else if (cpuOffload) {
        row.gpuBytes = largestLayerBytes + pyInt(pyTrueDiv(mul(2, p), hw.totalGpus));
        row.cpuBytes = pyInt(zeroInit ? static_cast<double>(mul(p, 16)) * hw.gpusFactor * abf
                                      : timesMax(p, fourG, 16 * hw.gpusFactor, abf));
    } else {
        row.gpuBytes = largestLayerBytes + pyInt(pyTrueDiv(mul(18, p), hw.totalGpus));
        const std::uint64_t held = zeroInit ? in.largestLayerParams : p;
        row.cpuBytes = pyInt(static_cast<double>(mul(mul(held, 4), hw.gpusPerNode)) * abf);
    }
    return row;
}

} // namespace

void validate(const DeepSpeedInput& in) {
    if (in.params == 0) throwInput(InputField::Params, "the parameter count must be at least 1");
    if (in.gpusPerNode < 1)
        throwInput(InputField::GpusPerNode,
                   "GPUs per node must be at least 1, got " + std::to_string(in.gpusPerNode));
    if (in.nodes < 1)
        throwInput(InputField::Nodes, "nodes must be at least 1, got " + std::to_string(in.nodes));
    if (!std::isfinite(in.additionalBufferFactor) || in.additionalBufferFactor <= 0.0)
        throwInput(InputField::BufferFactor,
                   "additional buffer factor must be a finite positive number");
    if (static_cast<double>(in.params) > kTwoPow53)
        throwInput(InputField::Params,
                   "parameter count " + std::to_string(in.params) + " is too large (at most 2^53)");
    if (static_cast<double>(in.largestLayerParams) > static_cast<double>(in.params))
        throwInput(InputField::LargestLayer,
                   "largest layer " + std::to_string(in.largestLayerParams) +
                       " exceeds the parameter count " + std::to_string(in.params));
    // Evaluate every row once so an overflow surfaces here, naming the input, not mid-print.
    (void)deepspeedZero2AllLive(in);
    (void)deepspeedZero3AllLive(in);
}

std::vector<DeepSpeedRow> deepspeedZero2AllLive(const DeepSpeedInput& in) {
    std::vector<DeepSpeedRow> rows;
    for (bool cpuOffload : {true, false})
        rows.push_back(zero2Row(in, cpuOffload));
    return rows;
}

std::vector<DeepSpeedRow> deepspeedZero3AllLive(const DeepSpeedInput& in) {
    std::vector<DeepSpeedRow> rows;
    for (bool cpuOffload : {true, false})
        for (bool offloadParams : {true, false}) {
            if (!cpuOffload && offloadParams) continue; // DeepSpeed skips this combination
            for (bool zeroInit : {true, false})
                rows.push_back(zero3Row(in, cpuOffload, offloadParams, zeroInit));
        }
    return rows;
}

std::string deepspeedOptions(const DeepSpeedRow& row, int stage) {
    // f'{OffloadDeviceEnum.cpu:4}' pads "cpu" to four characters.
    const std::string optimizer =
        std::string("offload_optimizer=") + (row.offloadOptimizer ? "cpu " : "none");
    if (stage == 2) return optimizer;
    return std::string("offload_param=") + (row.offloadParam ? "cpu " : "none") + ", " + optimizer +
           ", zero_init=" + (row.zeroInit ? "1" : "0");
}

std::uint64_t deepspeedLargestLayerParams(const plan::GptShape& shape) {
    const auto d = static_cast<std::uint64_t>(shape.dModel);
    const std::uint64_t tokenTable =
        static_cast<std::uint64_t>(shape.vocab) * d; // also the LM head
    const std::uint64_t positions = static_cast<std::uint64_t>(shape.seqLen) * d;
    const std::uint64_t mlpFc = 4 * d * d + 4 * d; // the largest Linear inside a block
    return std::max({tokenTable, positions, mlpFc});
}

} // namespace shardscope::theory
