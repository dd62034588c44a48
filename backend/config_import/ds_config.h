#pragma once
// DeepSpeed's ds_config.json (https://www.deepspeed.ai/docs/config-json/) as ShardScope flags.
//
// Mapped: zero_optimization.stage 0–3 (→ ddp, zero1, zero2, zero3), reduce_bucket_size /
// allgather_bucket_size (elements → --bucket-bytes at the run's bytes per element),
// stage3_prefetch_bucket_size and stage3_max_live_parameters (elements → whole decoder blocks:
// --prefetch, --max-inflight), stage3_param_persistence_threshold (→ --persistence-threshold),
// offload_optimizer / offload_param (→ --offload-optimizer / --offload-params host|nvme,
// --nvme-dir), bf16 / fp16 (→ --precision), train_micro_batch_size_per_gpu,
// gradient_accumulation_steps, train_batch_size (checked as DeepSpeed checks it: batch =
// micro-batch × accumulation × world size, the missing one derived), optimizer Adam/AdamW with lr
// (→ --lr) and betas, eps, weight_decay, gradient_clipping (applied when they equal the engine's
// fixed AdamW settings, ignored with those settings otherwise). "auto" is resolved as Hugging
// Face's integration resolves it (hidden² buckets, 0.9·hidden² prefetch, 10·hidden persistence, the
// batch product) or named when nothing resolves it.
#include "config_import/import.h"

#include <nlohmann/json.hpp>
#include <string>

namespace shardscope::config_import {

// The engine's AdamW (train/optimizer.h) for keys it cannot change.
struct EngineOptimizer {
    double beta1 = 0.9, beta2 = 0.95, eps = 1e-8, weightDecay = 0.1, clipNorm = 1.0;
};

// Parses `text` (named `source` in messages). Error(InvalidArgument) with one line naming the
// key path and the value for malformed JSON, a wrong type, an out-of-range or inconsistent
// value (a batch that does not multiply out, fp16 and bf16 both enabled, …).
Parsed parseDsConfig(const std::string& text, const std::string& source, const Context& context);
// The same for an already parsed object (Accelerate's inline deepspeed_config).
Parsed parseDsConfig(const nlohmann::json& root, const std::string& source, const Context& context,
                     const std::string& keyPrefix);

} // namespace shardscope::config_import
