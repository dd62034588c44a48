// shardscope-cli estimate: the theory engine's per-rank memory and communication (docs/design.md
// "Memory accounting"), or DeepSpeed's own estimators with --deepspeed.
#include "commands.h"
#include "config_import/import.h"
#include "core/error.h"
#include "estimate_common.h"
#include "theory/input_error.h"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <string>

namespace shardscope::cli {

namespace {

constexpr const char* kHelp =
    "usage: shardscope-cli estimate --params P --ranks N [flags]\n"
    "       shardscope-cli estimate --deepspeed zero2|zero3 --params P [--largest-layer L]\n"
    "                               --gpus-per-node G --nodes M [--json]\n"
    "\n"
    "Per-rank model states (params, grads, optimizer) by ledger category and tier, the\n"
    "communication per step and the formula behind every number.\n"
    "\n"
    "  --params P               parameter count: 7.5e9, 7500000000, 1.3B, 124M\n"
    "  --model-shape L,d,h,V,T  a GPT shape instead of --params (units padded to N)\n"
    "  --ranks N                data-parallel ranks (≥ 1)\n"
    "  --strategy S             ddp|zero1|zero2|zero3|fsdp|fsdp_grad_op|fsdp_hybrid|all,\n"
    "                           or a comma list; all = ddp,zero1,zero2,zero3,fsdp (default)\n"
    "  --precision X            bf16|fp16 (2+2+12 B/param, default), fp32 (4+4+8), custom\n"
    "  --optimizer-bytes K      optimizer bytes per param with --precision custom (0–64)\n"
    "  --hybrid-group G         fsdp_hybrid shard group size; must divide N\n"
    "  --offload-optimizer T    device|host|nvme: where master weights and Adam m, v live\n"
    "  --offload-param T        device|host|nvme: param shards (zero3 / fsdp only)\n"
    "  --micro-batch B          micro-batch for the activation term of the peak (with a shape)\n"
    "  --tp T                   tensor parallel: a T x D mesh of --ranks (with a shape); per-rank\n"
    "                           states of one TP slice over D, TP all-reduce bytes per step\n"
    "  --pp P                   pipeline stages: a P x T x D mesh of --ranks (with a shape);\n"
    "                           the stages' layers, each schedule's bubble and the activations\n"
    "                           each stage holds; the rows become the largest stage's\n"
    "  --micro-batches M        micro-batches per step and data-parallel rank (with --pp)\n"
    "  --pp-schedule S          gpipe|1f1b|interleaved|zb1|all, or a comma list (default all)\n"
    "  --virtual-stages V       model chunks per rank for interleaved (default 2)\n"
    "  --model-config FILE      a Hugging Face config.json (gpt2, llama, mistral, qwen2): exact\n"
    "                           params, largest layer, its own units (instead of --params)\n"
    "  --ds-config FILE         DeepSpeed ds_config.json: stage, precision, micro-batch, offload\n"
    "  --accelerate-config FILE Accelerate's config YAML, the same way (flags given win)\n"
    "  --json                   machine-readable output\n"
    "\n"
    "DeepSpeed mode reproduces estimate_zero{2,3}_model_states_mem_needs_all_live:\n"
    "  --deepspeed zero2|zero3  which estimator\n"
    "  --largest-layer L        largest layer's params (ZeRO-3; derived from --model-shape)\n"
    "  --model-config FILE      params and largest layer from a Hugging Face config.json\n"
    "  --gpus-per-node G        GPUs per node (default 1)\n"
    "  --nodes M                nodes (default 1)\n"
    "\n"
    "Units: GB = 1e9 bytes, GiB = 2^30 bytes. Bad input exits with code 2.\n";

// The flag through which the user gave the input theory refused.
const char* flagOf(theory::InputField field) {
    using theory::InputField;
    switch (field) {
    case InputField::Ranks:
        return "--ranks";
    case InputField::Params:
        return "--params";
    case InputField::ModelShape:
        return "--model-shape";
    case InputField::MicroBatch:
        return "--micro-batch";
    case InputField::OptimizerBytes:
        return "--optimizer-bytes";
    case InputField::HybridGroup:
        return "--hybrid-group";
    case InputField::OffloadParam:
        return "--offload-param";
    case InputField::Knobs:
        return "--strategy";
    case InputField::GpusPerNode:
        return "--gpus-per-node";
    case InputField::Nodes:
        return "--nodes";
    case InputField::LargestLayer:
        return "--largest-layer";
    case InputField::BufferFactor:
        return "--deepspeed";
    }
    return "estimate";
}

// --model-config, --ds-config and --accelerate-config are taken out of argv and read here; the
// configuration's flags are appended (flags on the command line win).
EstimateFiles readFiles(std::vector<std::string>& argv) {
    std::vector<std::pair<std::string, std::string>> extras;
    std::vector<std::string> rest;
    for (std::size_t i = 0; i < argv.size(); ++i) {
        std::string flag = argv[i];
        std::optional<std::string> value;
        if (const auto eq = flag.find('='); eq != std::string::npos && flag.rfind("--", 0) == 0) {
            value = flag.substr(eq + 1);
            flag = flag.substr(0, eq);
        }
        if (flag != "--model-config" && flag != "--ds-config" && flag != "--accelerate-config") {
            rest.push_back(argv[i]);
            continue;
        }
        if (!value) {
            if (i + 1 >= argv.size()) throwInvalid(flag + " needs a file");
            value = argv[++i];
        }
        for (const auto& [f, v] : extras)
            if (f == flag) throwInvalid(flag + " is given twice; give it once");
        extras.emplace_back(flag, *value);
    }
    EstimateFiles files;
    for (const auto& [flag, path] : extras)
        if (flag == "--model-config")
            files.model =
                config_import::parseHfConfig(config_import::readConfigFile(path, flag), path);
    if (const auto file = configFileFlag(extras)) {
        const bool deepspeed = std::find(rest.begin(), rest.end(), "--deepspeed") != rest.end();
        if (deepspeed)
            throwInvalid(file->first +
                         ": goes with the theory estimate (--ranks N), not --deepspeed");
        files.imported = importForEstimate(*file, rest, files.model ? &*files.model : nullptr);
    }
    if (files.model && std::any_of(rest.begin(), rest.end(), [](const std::string& a) {
            return a == "--deepspeed" || a.rfind("--deepspeed=", 0) == 0;
        })) {
        // DeepSpeed's estimator takes the model's count and its largest layer.
        if (std::find(rest.begin(), rest.end(), "--params") != rest.end() ||
            std::find(rest.begin(), rest.end(), "--largest-layer") != rest.end())
            throwInvalid("--model-config gives the model: drop --params / --largest-layer");
        rest.insert(rest.end(), {"--params", std::to_string(files.model->params), "--largest-layer",
                                 std::to_string(files.model->largestLayerParams)});
        files.model.reset();
    }
    argv = std::move(rest);
    return files;
}

} // namespace

int cmdEstimate(std::span<const std::string> argv) {
    const bool help = std::any_of(argv.begin(), argv.end(),
                                  [](const std::string& a) { return a == "--help" || a == "-h"; });
    if (help) {
        std::fputs(kHelp, stdout);
        return 0;
    }
    Args args("estimate",
              {"--params", "--model-shape", "--ranks", "--strategy", "--precision",
               "--optimizer-bytes", "--hybrid-group", "--offload-optimizer", "--offload-param",
               "--micro-batch", "--deepspeed", "--largest-layer", "--gpus-per-node", "--nodes",
               "--tp", "--pp", "--micro-batches", "--pp-schedule", "--virtual-stages"},
              {"--json"});
    std::vector<std::string> argList(argv.begin(), argv.end());
    const EstimateFiles files = readFiles(argList);
    args.parse(argList);
    if (args.has("--hybrid-group") && !args.has("--deepspeed")) {
        // Only fsdp_hybrid has shard groups; "all" adds it when --hybrid-group is given.
        const std::string list = args.value("--strategy").value_or("all");
        bool hybrid = false;
        std::stringstream names(list);
        for (std::string name; std::getline(names, name, ',');)
            hybrid = hybrid || name == "fsdp_hybrid" || name == "all";
        if (!hybrid)
            throwInvalid("--hybrid-group is an fsdp_hybrid option; --strategy " + list +
                         " has no shard groups");
    }
    try {
        if (args.has("--deepspeed")) return estimateDeepSpeed(args);
        return estimateTheory(args, files);
    } catch (const theory::InputError& e) {
        throwInvalid(std::string(flagOf(e.field())) + ": " + e.what());
    }
}

} // namespace shardscope::cli
