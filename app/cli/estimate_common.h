#pragma once
// Shared pieces of `shardscope-cli estimate` (cmd_estimate.cpp, estimate_theory.cpp,
// estimate_deepspeed.cpp). Everything throws Error(InvalidArgument) naming the flag.
#include "args.h"
#include "config_flags.h"
#include "config_import/hf_model.h"
#include "core/categories.h"
#include "plan/shape.h"
#include "theory/estimate.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace shardscope::cli {

// "1.88 GB (1.75 GiB)": decimal and binary units, always labelled.
std::string humanBytes(std::uint64_t bytes);

// --model-shape layers,d,heads,vocab,seq (validated, including d divisible by heads).
std::optional<plan::GptShape> modelShapeFlag(const Args& args);

// --offload-optimizer / --offload-param: device|host|nvme (cpu is accepted for host).
Tier tierFlag(const Args& args, const std::string& flag);

// Rejects flags of the other estimate mode, e.g. --ranks together with --deepspeed.
void rejectFlags(const Args& args, std::initializer_list<const char*> flags,
                 const std::string& why);

// A flag's comma list of names (--strategy, --pp-schedule): `each` takes every name in order
// and returns false for one it does not know. An unknown or empty name is one line naming the
// flag and listing `known`.
void forEachListed(const std::string& flag, const std::string& text, const std::string& known,
                   const std::function<bool(const std::string&)>& each);

// The predicted peak of each (shaped) scenario, from the worker's dry run of the real step
// (shardscope-worker --predict, estimate_predict.cpp). Throws Error(InvalidArgument) when the
// worker is missing or refuses a scenario, Error(Format) when its answer does not read.
std::vector<theory::PeakPrediction> dryRunPeaks(const std::vector<theory::Scenario>& scenarios);

// What estimate read from files: a Hugging Face model (--model-config) and the listing of a
// --ds-config / --accelerate-config whose flags were appended to the command line.
struct EstimateFiles {
    std::optional<config_import::HfModel> model;
    std::optional<ConfigImportResult> imported;
};

int estimateTheory(const Args& args, const EstimateFiles& files); // estimate --params P --ranks N …
int estimateDeepSpeed(const Args& args); // estimate --deepspeed zero2|zero3 …

} // namespace shardscope::cli
