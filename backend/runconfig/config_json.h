#pragma once
// A run configuration read back from its JSON (toJson's output: the base of a recording's
// handshake and of a report's "config"), so a front end can show the run that is loaded.
#include "runconfig/run_config.h"

#include <nlohmann/json_fwd.hpp>

namespace shardscope::runconfig {

// Every key of the field table (fields.h) is type-checked and, where it is a count or size, read
// against the table's limits (a knob may also keep its default, which strategies that do not
// read it carry) before it sizes anything; keys it does not know are ignored (the handshake adds
// its own; of those, bf16_gemm — the worker's resolved RunConfig::bf16Gemm — is read). The model
// must be a preset. Throws Error(InvalidArgument) naming the dotted key. What reads may still have
// problems that validate() reports (a hybrid group that does not divide the ranks, …).
RunConfig configFromJson(const nlohmann::json& json);

} // namespace shardscope::runconfig
