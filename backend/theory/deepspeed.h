#pragma once
// DeepSpeed's model-state estimators, reproduced so users can put ShardScope's numbers next to
// DeepSpeed's: estimate_zero2_model_states_mem_needs_all_live and
// estimate_zero3_model_states_mem_needs_all_live (deepspeed/runtime/zero/stage_1_and_2.py,
// stage3.py). Same row order, same integer truncation, additional_buffer_factor = 1.5.
#include "plan/shape.h"

#include <cstdint>
#include <string>
#include <vector>

namespace shardscope::theory {

struct DeepSpeedRow {
    bool offloadParam = false;
    bool offloadOptimizer = false;
    bool zeroInit = false; // ZeRO-3 only; ZeRO-2 rows report false
    std::uint64_t cpuBytes = 0;
    std::uint64_t gpuBytes = 0;
};

struct DeepSpeedInput {
    std::uint64_t params = 0;
    std::uint64_t largestLayerParams = 0; // ZeRO-3; 0 → not given (GUI derives it from a shape)
    int gpusPerNode = 1;
    int nodes = 1;
    double additionalBufferFactor = 1.5;
};

// Throws InputError (theory/input_error.h) naming the input at fault: params 0 or above 2^53,
// gpus/nodes < 1, a largest layer above params, a buffer factor that is not finite and
// positive, or products DeepSpeed computes that would not fit in 64 bits.
void validate(const DeepSpeedInput& in);

// Rows in DeepSpeed's print order. ZeRO-2: offload_optimizer cpu, none.
// ZeRO-3: (param, optimizer, zero_init) = (cpu,cpu,1) (cpu,cpu,0) (none,cpu,1) (none,cpu,0)
// (none,none,1) (none,none,0).
std::vector<DeepSpeedRow> deepspeedZero2AllLive(const DeepSpeedInput& in);
std::vector<DeepSpeedRow> deepspeedZero3AllLive(const DeepSpeedInput& in);

// DeepSpeed's "Options" column, e.g. "offload_param=cpu , offload_optimizer=none, zero_init=1"
// (stage 2 prints only offload_optimizer).
std::string deepspeedOptions(const DeepSpeedRow& row, int stage);

// What DeepSpeed's model_to_params() finds as largest_layer_params for this GPT: the largest
// module's own (non-recursive) parameters — max(token embedding V·d, positions T·d,
// MLP fc 4d²+4d, LM head V·d). Not a ShardScope unit.
std::uint64_t deepspeedLargestLayerParams(const plan::GptShape& shape);

} // namespace shardscope::theory
