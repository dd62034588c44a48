// estimate --deepspeed zero2|zero3: DeepSpeed's estimate_zero{2,3}_model_states_mem_needs_all_live
// tables, row for row, next to labelled units (DeepSpeed prints GiB values as "GB").
#include "core/error.h"
#include "estimate_common.h"
#include "theory/deepspeed.h"

#include <cstdio>
#include <nlohmann/json.hpp>
#include <vector>

namespace shardscope::cli {

namespace {

using namespace theory;

constexpr std::int64_t kMaxGpus = std::int64_t{1} << 20;

struct DeepSpeedRun {
    int stage = 3;
    DeepSpeedInput input;
    bool largestLayerGiven = false;
    std::vector<DeepSpeedRow> rows;
};

DeepSpeedRun parseRun(const Args& args) {
    rejectFlags(args,
                {"--ranks", "--strategy", "--precision", "--optimizer-bytes", "--hybrid-group",
                 "--offload-optimizer", "--offload-param", "--micro-batch", "--tp", "--pp",
                 "--micro-batches", "--pp-schedule", "--virtual-stages"},
                "does not apply to --deepspeed (it takes --gpus-per-node and --nodes and lists "
                "every offload option)");
    DeepSpeedRun run;
    const std::string stage = args.required("--deepspeed");
    if (stage != "zero2" && stage != "zero3")
        throwInvalid("--deepspeed expects zero2 or zero3, got '" + stage + "'");
    run.stage = stage == "zero2" ? 2 : 3;
    const auto shape = modelShapeFlag(args);
    if (shape && args.has("--params"))
        throwInvalid("--params and --model-shape exclude each other");
    if (shape && args.has("--largest-layer"))
        throwInvalid("--largest-layer and --model-shape exclude each other (the shape gives it)");
    run.input.params = shape ? plan::paramCount(*shape) : args.count("--params");
    if (shape) {
        run.input.largestLayerParams = deepspeedLargestLayerParams(*shape);
        run.largestLayerGiven = true;
    } else if (args.has("--largest-layer")) {
        run.input.largestLayerParams = args.count("--largest-layer");
        run.largestLayerGiven = true;
    }
    if (args.has("--gpus-per-node"))
        run.input.gpusPerNode = static_cast<int>(args.integer("--gpus-per-node", 1, kMaxGpus));
    if (args.has("--nodes"))
        run.input.nodes = static_cast<int>(args.integer("--nodes", 1, kMaxGpus));
    validate(run.input);
    run.rows = run.stage == 2 ? deepspeedZero2AllLive(run.input) : deepspeedZero3AllLive(run.input);
    return run;
}

std::string note(const DeepSpeedRun& run) {
    if (run.stage == 3 && !run.largestLayerGiven)
        return "--largest-layer not given: DeepSpeed's 4·largest_layer_params term is 0 "
               "(pass --largest-layer or --model-shape)";
    return "";
}

void printJson(const DeepSpeedRun& run) {
    nlohmann::json out = {{"deepspeed", run.stage == 2 ? "zero2" : "zero3"},
                          {"params", run.input.params},
                          {"largest_layer_params", run.input.largestLayerParams},
                          {"gpus_per_node", run.input.gpusPerNode},
                          {"nodes", run.input.nodes},
                          {"additional_buffer_factor", run.input.additionalBufferFactor},
                          {"rows", nlohmann::json::array()}};
    for (const auto& r : run.rows)
        out["rows"].push_back({{"offload_param", r.offloadParam ? "cpu" : "none"},
                               {"offload_optimizer", r.offloadOptimizer ? "cpu" : "none"},
                               {"zero_init", r.zeroInit ? 1 : 0},
                               {"cpu_bytes", r.cpuBytes},
                               {"gpu_bytes", r.gpuBytes}});
    if (const std::string n = note(run); !n.empty()) out["notes"] = {n};
    std::printf("%s\n", out.dump(2).c_str());
}

// DeepSpeed's *_all_cold printout, with each cell also in labelled GiB and GB.
void printTable(const DeepSpeedRun& run) {
    const DeepSpeedInput& in = run.input;
    constexpr double kGiB = 1073741824.0;
    std::printf("DeepSpeed estimate_zero%d_model_states_mem_needs_all_live (%s)\n", run.stage,
                run.stage == 2 ? "deepspeed/runtime/zero/stage_1_and_2.py"
                               : "deepspeed/runtime/zero/stage3.py");
    std::printf("Estimated memory needed for params, optim states and gradients for a:\n");
    std::printf("HW: Setup with %d %s, %d %s per node.\n", in.nodes,
                in.nodes > 1 ? "nodes" : "node", in.gpusPerNode,
                in.gpusPerNode > 1 ? "GPUs" : "GPU");
    std::printf("SW: Model with %lluM total params",
                static_cast<unsigned long long>(in.params / 1000000));
    if (run.stage == 3)
        std::printf(", %lluM largest layer params",
                    static_cast<unsigned long long>(in.largestLayerParams / 1000000));
    std::printf(".\n  per CPU  |  per GPU |   Options   (DeepSpeed's \"GB\" = GiB = 2^30 B)\n");
    for (const auto& r : run.rows)
        std::printf(" %7.2fGB | %6.2fGB | %s   [cpu %s, gpu %s]\n",
                    static_cast<double>(r.cpuBytes) / kGiB, static_cast<double>(r.gpuBytes) / kGiB,
                    deepspeedOptions(r, run.stage).c_str(), humanBytes(r.cpuBytes).c_str(),
                    humanBytes(r.gpuBytes).c_str());
    if (const std::string n = note(run); !n.empty()) std::printf("note: %s\n", n.c_str());
}

} // namespace

int estimateDeepSpeed(const Args& args) {
    const DeepSpeedRun run = parseRun(args);
    if (args.has("--json"))
        printJson(run);
    else
        printTable(run);
    return 0;
}

} // namespace shardscope::cli
