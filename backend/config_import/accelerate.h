#pragma once
// Hugging Face Accelerate's config YAML (`accelerate config`'s default_config.yaml) as
// ShardScope flags, parsed with yaml-cpp.
//
// Mapped: distributed_type (FSDP, DEEPSPEED, MULTI_GPU / MULTI_CPU = DDP, NO = one rank),
// num_processes (→ --ranks unless given), mixed_precision (→ --precision); fsdp_config:
// fsdp_version 1 | 2, fsdp_sharding_strategy (FULL_SHARD, SHARD_GRAD_OP, NO_SHARD, HYBRID_SHARD,
// or 1–4 → fsdp, fsdp_grad_op, ddp, fsdp_hybrid with a shard group of num_processes /
// num_machines), fsdp_reshard_after_forward, fsdp_offload_params, fsdp_backward_prefetch
// (→ --prefetch 1 | 0), fsdp_forward_prefetch, fsdp_auto_wrap_policy (TRANSFORMER_BASED_WRAP is
// ShardScope's unit: one per block), fsdp_activation_checkpointing (→ --checkpointing),
// fsdp_state_dict_type; deepspeed_config with its inline fields (zero_stage, offload devices,
// gradient_accumulation_steps, gradient_clipping) or deepspeed_config_file (read as a
// ds_config.json: as given, else relative to the YAML's folder).
#include "config_import/import.h"

#include <string>

namespace shardscope::config_import {

// Parses `text` (the file `source`). `context.worldSize` is --ranks when given; otherwise the
// file's num_processes is used for the batch check of a DeepSpeed file. Error(InvalidArgument)
// with one line naming the key path and the value.
Parsed parseAccelerateConfig(const std::string& text, const std::string& source,
                             const Context& context);

} // namespace shardscope::config_import
