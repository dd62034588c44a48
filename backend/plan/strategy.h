#pragma once
// What a user chooses: strategy, precision, offload, knobs. Pure data + parsing; what each
// strategy does with them is policy.h.
#include "core/categories.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace shardscope::plan {

enum class Strategy : std::uint8_t {
    Ddp,
    Zero1,
    Zero2,
    Zero3,
    FsdpFullShard,   // ≈ ZeRO-3, unit-wise flat params
    FsdpShardGradOp, // ≈ ZeRO-2: params stay gathered between forward and backward
    FsdpHybridShard, // FULL_SHARD inside a group of hybridGroupSize ranks, replicate across groups
};
inline constexpr std::size_t kStrategyCount = 7;

// CLI/JSON names: ddp zero1 zero2 zero3 fsdp fsdp_grad_op fsdp_hybrid
std::string_view strategyName(Strategy s);
std::optional<Strategy> parseStrategy(std::string_view name);
std::vector<Strategy> allStrategies();     // the seven above
std::vector<Strategy> classicStrategies(); // ddp zero1 zero2 zero3 fsdp (docs/design.md's "all")
// Names joined by commas ("ddp,zero1,…"): compare's --strategies list.
std::string strategyList(const std::vector<Strategy>& strategies);

enum class PrecisionKind : std::uint8_t {
    MixedBf16, // bf16 params+grads, fp32 master + Adam m, v: 2+2+12 = 16 B/param (ZeRO paper)
    MixedFp16, // same byte counts as bf16
    Fp32,      // fp32 params+grads, Adam m, v, no master copy: 4+4+8 = 16 B/param
    Custom,    // mixed-precision params/grads (2+2) and K optimizer bytes per parameter
};

struct Precision {
    PrecisionKind kind = PrecisionKind::MixedBf16;
    std::uint32_t customOptimizerBytes = 12; // K, used only with Custom

    std::uint32_t paramBytes() const; // per element of the working copy
    std::uint32_t gradBytes() const;
    std::uint32_t masterBytes() const; // fp32 master copy per element (0 in pure fp32)
    std::uint32_t adamMBytes() const;
    std::uint32_t adamVBytes() const;
    std::uint32_t optimizerBytes() const; // K = master + m + v
};
std::string_view precisionName(PrecisionKind k); // bf16 fp16 fp32 custom
std::optional<PrecisionKind> parsePrecision(std::string_view name);

struct Offload {
    Tier optimizer = Tier::Device; // where master, m, v live (ZeRO-Offload / ZeRO-Infinity)
    Tier param = Tier::Device;     // where the param shards live (ZeRO-3 / FSDP only)
};

// Knobs of the actual implementation, so the engine predicts what the run will measure.
struct Knobs {
    std::uint64_t reduceBucketBytes = 25ull << 20; // DDP all-reduce / ZeRO-2 reduce-scatter bucket
    std::uint64_t allGatherBucketBytes = 25ull << 20; // ZeRO-1/2 param all-gather bucket
    int prefetchDepth = 1;                            // units gathered ahead (ZeRO-3 / FSDP)
    bool reshardAfterForward = true;                  // FSDP; false ≈ SHARD_GRAD_OP for params
    int maxInflightAllGathers = 2;                    // FSDP's limit_all_gathers analogue
    std::uint64_t persistenceThresholdParams = 0;     // ZeRO-3: units this small stay whole
    int hybridGroupSize = 0;                          // HYBRID_SHARD: ranks per shard group
    int gradAccumSteps = 1;
    bool noSync = false; // FSDP no_sync during accumulation: keep full unsharded grads
    // --deterministic: reductions summed in rank order through comm_buffer scratch (the
    // MPI communicator's alltoall staging), which the peak prediction counts.
    bool deterministicReductions = false;
    // --shared-device: ranks are threads (comm/shared_device_communicator.h); every reduction is
    // in rank order, reduce-scatter needs no scratch, all-reduce one chunk of ⌈count/N⌉.
    bool sharedDeviceCollectives = false;
    // bf16 on a CPU with bf16 units (kernels/cpu/gemm.h): linear layers' GEMMs in bf16, their
    // inputs kept in bf16 and dy copied to bf16 workspace for each call, which the peak
    // prediction counts.
    bool bf16Gemm = false;
};

struct ActivationConfig {
    std::int64_t microBatch = 1;
    bool checkpointing = false; // per block: keep the block input, recompute in backward
};

} // namespace shardscope::plan
