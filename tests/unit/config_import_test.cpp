// DeepSpeed ds_config.json read into flags: every key applied or listed, "auto" resolved as
// Hugging Face resolves it, DeepSpeed's batch check, bad values named by key path, flags win.
#include "config_import/accelerate.h"
#include "config_import/ds_config.h"
#include "config_import/hf_model.h"
#include "config_import/import.h"
#include "core/error.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <functional>
#include <gtest/gtest.h>
#include <string>

namespace {

using namespace shardscope;
using namespace shardscope::config_import;

Context runContext() {
    Context c;
    c.command = "run";
    c.worldSize = 2;
    c.hiddenSize = 64;
    c.blockParams = 50'000;
    c.defaultMicroBatch = 4;
    c.accepted = {"--strategy",   "--precision",    "--micro-batch",
                  "--grad-accum", "--lr",           "--bucket-bytes",
                  "--prefetch",   "--max-inflight", "--persistence-threshold"};
    c.unsupported = {{"--offload-optimizer", "offload tiers not in this build"},
                     {"--offload-params", "offload tiers not in this build"},
                     {"--nvme-dir", "offload tiers not in this build"}};
    return c;
}

Imported import(const std::string& text, const Context& c = runContext()) {
    return finish(parseDsConfig(text, "ds.json", c), c);
}

std::string errorOf(const std::string& text, const Context& c = runContext()) {
    try {
        import(text, c);
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
        return e.what();
    }
    return "(no error)";
}

const Applied* applied(const Imported& i, const std::string& key) {
    const auto it = std::find_if(i.applied.begin(), i.applied.end(),
                                 [&](const Applied& a) { return a.key == key; });
    return it == i.applied.end() ? nullptr : &*it;
}
const Ignored* ignored(const Imported& i, const std::string& key) {
    const auto it = std::find_if(i.ignored.begin(), i.ignored.end(),
                                 [&](const Ignored& a) { return a.key == key; });
    return it == i.ignored.end() ? nullptr : &*it;
}

// The ds_config Hugging Face's Trainer docs ship for ZeRO-3 (auto values), plus a few extras.
const char* kHfZero3 = R"({
  "bf16": {"enabled": true},
  "optimizer": {"type": "AdamW", "params": {"lr": "auto", "betas": "auto", "eps": "auto", "weight_decay": "auto"}},
  "scheduler": {"type": "WarmupLR", "params": {"warmup_num_steps": "auto"}},
  "zero_optimization": {
    "stage": 3,
    "offload_optimizer": {"device": "cpu", "pin_memory": true},
    "offload_param": {"device": "none"},
    "overlap_comm": true,
    "contiguous_gradients": true,
    "sub_group_size": 1e9,
    "reduce_bucket_size": "auto",
    "stage3_prefetch_bucket_size": "auto",
    "stage3_param_persistence_threshold": "auto",
    "stage3_max_live_parameters": 1e9,
    "stage3_max_reuse_distance": 1e9,
    "stage3_gather_16bit_weights_on_model_save": true
  },
  "gradient_accumulation_steps": "auto",
  "gradient_clipping": "auto",
  "steps_per_print": 2000,
  "train_batch_size": "auto",
  "train_micro_batch_size_per_gpu": "auto",
  "wall_clock_breakdown": false
})";

// Every leaf key path of a JSON object (arrays are leaves).
void leafPaths(const nlohmann::json& j, const std::string& prefix, std::vector<std::string>& out) {
    for (const auto& [k, v] : j.items()) {
        const std::string path = prefix.empty() ? k : prefix + "." + k;
        if (v.is_object() && !v.empty())
            leafPaths(v, path, out);
        else
            out.push_back(path);
    }
}

TEST(configImportDs, EveryKeyIsAppliedOrListed) {
    const Imported i = import(kHfZero3);
    std::vector<std::string> leaves;
    leafPaths(nlohmann::json::parse(kHfZero3), "", leaves);
    for (const std::string& key : leaves) {
        // A block DeepSpeed has no use for (scheduler) is listed as a whole.
        const bool listed = applied(i, key) || ignored(i, key) ||
                            (key.rfind("scheduler.", 0) == 0 && ignored(i, "scheduler"));
        EXPECT_TRUE(listed) << key;
    }
}

// A key whose flag the run's strategy does not read sets nothing: FSDP's in-flight limit is no
// ZeRO-3 knob (runconfig's field table says which strategies read a flag).
TEST(configImportDs, AKnobTheStrategyDoesNotReadIsListedAsIgnored) {
    const Imported i =
        import(R"({"zero_optimization": {"stage": 3, "stage3_max_live_parameters": 200000}})");
    ASSERT_TRUE(ignored(i, "zero_optimization.stage3_max_live_parameters"));
    EXPECT_EQ(ignored(i, "zero_optimization.stage3_max_live_parameters")->why,
              "sets --max-inflight, which zero3 does not read");
    EXPECT_EQ(std::count(i.args.begin(), i.args.end(), "--max-inflight"), 0);
}

TEST(configImportDs, AutoResolvesAsHuggingFaceDoes) {
    const Imported i = import(kHfZero3);
    ASSERT_TRUE(applied(i, "zero_optimization.stage"));
    EXPECT_EQ(applied(i, "zero_optimization.stage")->setting, "--strategy zero3");
    // reduce_bucket_size auto = hidden² elements; bf16 → 2 bytes each.
    ASSERT_TRUE(applied(i, "zero_optimization.reduce_bucket_size"));
    EXPECT_EQ(applied(i, "zero_optimization.reduce_bucket_size")
                  ->setting.rfind("--bucket-bytes 8192 (auto: hidden² = 4096", 0),
              0u);
    // persistence auto = 10 × hidden.
    EXPECT_EQ(applied(i, "zero_optimization.stage3_param_persistence_threshold")
                  ->setting.rfind("--persistence-threshold 640", 0),
              0u);
    // prefetch auto = 0.9 × 4096 = 3686 elements: less than one 50,000-parameter block.
    EXPECT_EQ(applied(i, "zero_optimization.stage3_prefetch_bucket_size")
                  ->setting.rfind("--prefetch 0", 0),
              0u);
    // The batch: micro-batch is the preset's, accumulation 1, two ranks.
    ASSERT_TRUE(ignored(i, "train_batch_size"));
    EXPECT_NE(ignored(i, "train_batch_size")->why.find("= 8"), std::string::npos);
    EXPECT_EQ(ignored(i, "zero_optimization.offload_optimizer.device")->why,
              "offload tiers not in this build");
    const std::vector<std::string> want = {"--strategy", "zero3", "--precision", "bf16"};
    EXPECT_TRUE(std::search(i.args.begin(), i.args.end(), want.begin(), want.end()) !=
                i.args.end());
}

TEST(configImportDs, BatchIsCheckedAsDeepSpeedChecksIt) {
    // 16 ≠ 2 × 2 × 2: one line naming the key and the value.
    const std::string e = errorOf(
        R"({"train_batch_size": 16, "train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 2})");
    EXPECT_NE(e.find("train_batch_size = 16"), std::string::npos) << e;
    EXPECT_NE(e.find("2 × gradient accumulation 2 × world size 2 = 8"), std::string::npos) << e;
    EXPECT_EQ(e.find('\n'), std::string::npos);
    // The missing one is derived: 16 / (2 × 2) = 4 steps of accumulation.
    const Imported i = import(R"({"train_batch_size": 16, "train_micro_batch_size_per_gpu": 2})");
    ASSERT_TRUE(applied(i, "train_batch_size"));
    EXPECT_EQ(applied(i, "train_batch_size")->setting.rfind("--grad-accum 4", 0), 0u);
    // Not divisible.
    EXPECT_NE(errorOf(R"({"train_batch_size": 15, "train_micro_batch_size_per_gpu": 2})")
                  .find("not a multiple"),
              std::string::npos);
}

// The batch check divides by the flags given and multiplies by the world: '--micro-batch 0' was
// a SIGFPE, and estimate's world of up to 2^30 overflowed the product (signed, undefined).
TEST(configImportDs, BatchCheckNeitherDividesByZeroNorOverflows) {
    Context c = runContext();
    c.given = {{"--micro-batch", "0"}};
    EXPECT_EQ(errorOf(R"({"train_batch_size": 16})", c), "--micro-batch must be at least 1, got 0");
    c.given = {{"--grad-accum", "-3"}};
    EXPECT_EQ(errorOf(R"({"train_batch_size": 16})", c), "--grad-accum must be at least 1, got -3");
    c = runContext();
    c.worldSize = 1 << 30;
    EXPECT_EQ(
        errorOf(
            R"({"train_batch_size": 1, "train_micro_batch_size_per_gpu": 2147483647, "gradient_accumulation_steps": 4096})",
            c),
        "ds.json: micro-batch × gradient accumulation × world size is past 2^63");
}

// A number past double's range is malformed JSON: one line naming the file, not an internal error.
TEST(configImportDs, ANumberPastDoublesRangeIsOneLine) {
    const std::string e = errorOf(
        R"({"zero_optimization": {"stage": 3, "reduce_bucket_size": 1e400}})", runContext());
    EXPECT_EQ(e.rfind("ds.json: not valid JSON", 0), 0u) << e;
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
}

// A key given twice is refused naming its path, as duplicate YAML keys are (which of the two
// would win differs between JSON readers).
TEST(configImportDs, AKeyGivenTwiceIsRefused) {
    const std::string e =
        errorOf(R"({"zero_optimization": {"stage": 2, "stage": 3}, "train_batch_size": 8})");
    EXPECT_EQ(e, "ds.json: key \"zero_optimization.stage\" is given twice") << e;
    EXPECT_NE(errorOf(R"({"gradient_accumulation_steps": 1, "gradient_accumulation_steps": 2})")
                  .find("\"gradient_accumulation_steps\" is given twice"),
              std::string::npos);
    // The same key in two different objects is two keys.
    EXPECT_EQ(errorOf(R"({"zero_optimization": {"stage": 3}, "x": {"stage": 1}})"), "(no error)");
}

TEST(configImportDs, FlagsOnTheCommandLineWin) {
    Context c = runContext();
    c.given = {{"--micro-batch", "3"}, {"--strategy", "fsdp"}};
    const Imported i = import(
        R"({"train_micro_batch_size_per_gpu": 2, "train_batch_size": 6, "zero_optimization": {"stage": 2}})",
        c);
    EXPECT_EQ(ignored(i, "train_micro_batch_size_per_gpu")->why,
              "overridden by --micro-batch on the command line");
    EXPECT_EQ(ignored(i, "zero_optimization.stage")->why,
              "overridden by --strategy on the command line");
    // The accumulation is derived from the flag's micro-batch: 6 / (3 × 2) = 1.
    ASSERT_TRUE(applied(i, "train_batch_size"));
    EXPECT_EQ(applied(i, "train_batch_size")->setting.rfind("--grad-accum 1", 0), 0u);
    EXPECT_TRUE(std::find(i.args.begin(), i.args.end(), "--micro-batch") == i.args.end());
    EXPECT_TRUE(std::find(i.args.begin(), i.args.end(), "--strategy") == i.args.end());
}

// DeepSpeed's "pipeline" block: a number of stages sets --pp, "auto" is DeepSpeed's code's
// (PipelineModule's num_stages), interval 1 checkpoints every block; the rest is listed with why;
// the batch counts the data-parallel ranks (world / stages), as DeepSpeed's does.
TEST(configImportDs, PipelineBlockSetsTheStagesAndTheBatchCountsDataParallelRanks) {
    Context c = runContext();
    c.worldSize = 4;
    c.accepted.insert({"--pp", "--checkpointing"});
    const Imported i = import(R"({"train_batch_size": 32, "gradient_accumulation_steps": 4,
        "pipeline": {"stages": 2, "partition": "uniform", "activation_checkpoint_interval": 1,
                     "pipe_partitioned": true, "grad_partitioned": false, "seed_layers": false,
                     "something": 1}})",
                              c);
    ASSERT_TRUE(applied(i, "pipeline.stages"));
    EXPECT_EQ(applied(i, "pipeline.stages")->setting, "--pp 2");
    ASSERT_TRUE(applied(i, "pipeline.activation_checkpoint_interval"));
    EXPECT_EQ(
        applied(i, "pipeline.activation_checkpoint_interval")->setting.rfind("--checkpointing", 0),
        0u);
    // 32 = micro-batch × 4 accumulated × D = 4 / 2 stages: a micro-batch of 4.
    ASSERT_TRUE(applied(i, "train_batch_size"));
    EXPECT_EQ(applied(i, "train_batch_size")->setting.rfind("--micro-batch 4", 0), 0u)
        << applied(i, "train_batch_size")->setting;
    for (const char* key :
         {"pipeline.partition", "pipeline.pipe_partitioned", "pipeline.grad_partitioned",
          "pipeline.seed_layers", "pipeline.something"})
        EXPECT_TRUE(ignored(i, key)) << key;
    EXPECT_NE(ignored(i, "pipeline.partition")->why.find("matches"), std::string::npos);
    const Imported automatic =
        import(R"({"pipeline": {"stages": "auto", "activation_checkpoint_interval": 2}})", c);
    ASSERT_TRUE(ignored(automatic, "pipeline.stages"));
    EXPECT_NE(ignored(automatic, "pipeline.stages")->why.find("num_stages"), std::string::npos);
    EXPECT_TRUE(ignored(automatic, "pipeline.activation_checkpoint_interval"));
    for (const char* bad : {R"({"pipeline": {"stages": 0}})", R"({"pipeline": {"stages": 65}})",
                            R"({"pipeline": {"stages": 1.5}})", R"({"pipeline": 3})",
                            R"({"pipeline": {"partition": 7}})"})
        EXPECT_NE(errorOf(bad, c).find("pipeline"), std::string::npos) << bad;
}

TEST(configImportDs, BadValuesNameTheKeyPathAndValue) {
    EXPECT_NE(errorOf(R"({"zero_optimization": {"stage": 4}})")
                  .find("zero_optimization.stage = 4: must be in 0–3"),
              std::string::npos);
    EXPECT_NE(errorOf(R"({"bf16": {"enabled": "yes"}})")
                  .find("bf16.enabled = \"yes\": must be true or false"),
              std::string::npos);
    EXPECT_NE(errorOf(R"({"bf16": {"enabled": true}, "fp16": {"enabled": true}})")
                  .find("cannot both be enabled"),
              std::string::npos);
    EXPECT_NE(errorOf(R"({"zero_optimization": {"offload_param": {"device": "gpu"}}})")
                  .find("offload_param.device = \"gpu\""),
              std::string::npos);
    EXPECT_NE(errorOf(R"({"optimizer": {"params": {"lr": -1}}})").find("optimizer.params.lr = -1"),
              std::string::npos);
    EXPECT_NE(errorOf(R"({"train_micro_batch_size_per_gpu": 2.5})").find("must be a whole number"),
              std::string::npos);
    EXPECT_NE(errorOf(R"({"zero_optimization": {"stage": 3,)").find("not valid JSON at byte"),
              std::string::npos);
    EXPECT_NE(errorOf("[1, 2]").find("must be a JSON object"), std::string::npos);
}

TEST(configImportDs, OffloadMapsOntoTheOffloadFlagsWhereACommandTakesThem) {
    Context c = runContext();
    c.command = "estimate";
    c.accepted.insert({"--offload-optimizer", "--offload-param"});
    c.aliases = {{"--offload-params", "--offload-param"}};
    const Imported i = import(
        R"({"zero_optimization": {"stage": 3, "offload_optimizer": {"device": "nvme", "nvme_path": "/nvme"},
                                  "offload_param": {"device": "cpu"}}})",
        c);
    EXPECT_EQ(applied(i, "zero_optimization.offload_optimizer.device")->setting,
              "--offload-optimizer nvme");
    EXPECT_EQ(applied(i, "zero_optimization.offload_param.device")->setting,
              "--offload-param host");
    EXPECT_EQ(ignored(i, "zero_optimization.offload_optimizer.nvme_path")->why,
              "offload tiers not in this build");
}

// DeepSpeed's aio block sets the NVMe tier's block size and queue depth; the rest is listed.
TEST(configImportDs, AioMapsOntoTheNvmeTierFlags) {
    Context c = runContext();
    c.accepted.insert(
        {"--offload-optimizer", "--nvme-dir", "--aio-block-bytes", "--aio-queue-depth"});
    const std::string aio = R"("aio": {"block_size": 262144, "queue_depth": 16, "thread_count": 2,
                                       "single_submit": false, "overlap_events": true, "use_gds": false})";
    const Imported i =
        import(R"({"zero_optimization": {"stage": 3, "offload_optimizer": {"device": "nvme",
                                  "nvme_path": "/nvme"}}, )" +
                   aio + "}",
               c);
    EXPECT_EQ(applied(i, "aio.block_size")->setting, "--aio-block-bytes 262144");
    EXPECT_EQ(applied(i, "aio.queue_depth")->setting, "--aio-queue-depth 16");
    for (const char* key :
         {"aio.thread_count", "aio.single_submit", "aio.overlap_events", "aio.use_gds"}) {
        ASSERT_TRUE(ignored(i, key)) << key;
        EXPECT_EQ(ignored(i, key)->why.find("not a setting"), std::string::npos)
            << key << ": " << ignored(i, key)->why;
    }
    // Nothing on NVMe: the flags would be refused, so the keys are listed with that reason.
    const Imported none = import("{" + aio + "}", c);
    EXPECT_EQ(ignored(none, "aio.block_size")->why,
              "an NVMe tier setting; nothing is offloaded to nvme");
    EXPECT_TRUE(none.args.empty());
    // … unless the command line puts a tier there.
    c.given = {{"--offload-optimizer", "nvme"}};
    EXPECT_EQ(applied(import("{" + aio + "}", c), "aio.queue_depth")->setting,
              "--aio-queue-depth 16");
    EXPECT_NE(errorOf(R"({"aio": {"block_size": 5000}})", c)
                  .find("aio.block_size = 5000: must be a multiple of 4096"),
              std::string::npos);
    EXPECT_NE(errorOf(R"({"aio": {"queue_depth": 0}})", c).find("aio.queue_depth = 0"),
              std::string::npos);
}

// As DeepSpeed: nvme_path counts only where its block's device is nvme, as it will run — the
// command line's offload flag wins over the file's device.
TEST(configImportDs, NvmePathCountsOnlyWhereTheDeviceIsNvme) {
    Context c = runContext();
    c.accepted.insert({"--offload-optimizer", "--offload-params", "--nvme-dir"});
    const Imported cpu = import(
        R"({"zero_optimization": {"stage": 3, "offload_optimizer": {"device": "cpu", "nvme_path": "/tmp"}}})",
        c);
    ASSERT_TRUE(ignored(cpu, "zero_optimization.offload_optimizer.nvme_path"));
    EXPECT_EQ(applied(cpu, "zero_optimization.offload_optimizer.nvme_path"), nullptr);
    const std::string nvme =
        R"({"zero_optimization": {"stage": 3, "offload_param": {"device": "nvme", "nvme_path": "/tmp"}}})";
    EXPECT_EQ(applied(import(nvme, c), "zero_optimization.offload_param.nvme_path")->setting,
              "--nvme-dir /tmp");
    c.given = {{"--offload-params", "host"}};
    EXPECT_TRUE(ignored(import(nvme, c), "zero_optimization.offload_param.nvme_path"));
}

TEST(configImportDs, EngineFixedSettingsAreNamedWhenTheyDiffer) {
    const Imported i =
        import(R"({"gradient_clipping": 0.5, "optimizer": {"type": "Lamb", "params": {"lr": 0.01}},
                                  "fp16": {"enabled": true, "loss_scale": 0}})");
    EXPECT_NE(ignored(i, "gradient_clipping")->why.find("at 1, fixed"), std::string::npos);
    EXPECT_NE(ignored(i, "optimizer.type")->why.find("AdamW only"), std::string::npos);
    EXPECT_TRUE(ignored(i, "optimizer.params.lr")); // not Adam: its lr is not ours to apply
    EXPECT_EQ(applied(i, "fp16.enabled")->setting.rfind("--precision bf16", 0), 0u);
    EXPECT_TRUE(ignored(i, "fp16.loss_scale"));
}

TEST(configImportDs, AutoWithoutAModelShapeIsNamed) {
    Context c = runContext();
    c.hiddenSize = 0;
    c.blockParams = 0;
    const Imported i = import(
        R"({"zero_optimization": {"stage": 3, "reduce_bucket_size": "auto", "stage3_max_live_parameters": 1e9}})",
        c);
    EXPECT_NE(ignored(i, "zero_optimization.reduce_bucket_size")->why.find("hidden size"),
              std::string::npos);
    EXPECT_NE(
        ignored(i, "zero_optimization.stage3_max_live_parameters")->why.find("decoder blocks"),
        std::string::npos);
}

TEST(configImportDs, CompareLeavesTheStrategyToItsList) {
    Context c = runContext();
    c.command = "compare";
    c.accepted.erase("--strategy");
    c.unsupported["--strategy"] = "compare runs every strategy in --strategies";
    const Imported i = import(R"({"zero_optimization": {"stage": 1}})", c);
    EXPECT_EQ(ignored(i, "zero_optimization.stage")->why,
              "compare runs every strategy in --strategies");
}

} // namespace

// Accelerate's YAML (yaml-cpp), with the real files under tests/data/configs.
namespace {

std::string dataFile(const std::string& name) {
    return std::string(SHARDSCOPE_SOURCE_DIR) + "/tests/data/configs/" + name;
}

Imported importAccelerate(const std::string& file, Context c) {
    return finish(parseAccelerateConfig(readConfigFile(dataFile(file), "--accelerate-config"),
                                        dataFile(file), c),
                  c);
}

Context acceleratedRun() {
    Context c = runContext();
    c.accepted.insert({"--ranks", "--reshard-after-forward", "--hybrid-group", "--checkpointing"});
    return c;
}

std::string accelerateError(const std::string& text) {
    try {
        const Context c = acceleratedRun();
        finish(parseAccelerateConfig(text, "acc.yaml", c), c);
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
        return e.what();
    }
    return "(no error)";
}

// A second YAML document would be dropped without a word: refused. FSDP without a sharding
// strategy runs Accelerate's default, FULL_SHARD (it said "--strategy is required").
TEST(configImportAccelerate, OneDocumentAndFsdpsDefaultSharding) {
    const std::string two =
        accelerateError("distributed_type: FSDP\nnum_processes: 2\n---\nnum_processes: 4\n");
    EXPECT_EQ(two, "acc.yaml: line 3 starts a second YAML document; an Accelerate config is one")
        << two;
    // A leading marker, comments and a final "..." are one document.
    EXPECT_EQ(accelerateError("--- # the config\ndistributed_type: FSDP\nnum_processes: 2\n...\n"),
              "(no error)");
    const Context c = acceleratedRun();
    const Imported i = finish(
        parseAccelerateConfig("distributed_type: FSDP\nnum_processes: 2\n", "acc.yaml", c), c);
    const Applied* strategy = applied(i, "distributed_type");
    ASSERT_NE(strategy, nullptr);
    EXPECT_EQ(strategy->setting.rfind("--strategy fsdp", 0), 0u) << strategy->setting;
    EXPECT_EQ(ignored(i, "distributed_type"), nullptr);
}

TEST(configImportAccelerate, FsdpHybridShardsInsideEachMachine) {
    const Imported i = importAccelerate("accelerate_fsdp_hybrid.yaml", acceleratedRun());
    const std::vector<std::string> want = {"--strategy", "fsdp_hybrid", "--hybrid-group", "2"};
    EXPECT_TRUE(std::search(i.args.begin(), i.args.end(), want.begin(), want.end()) !=
                i.args.end());
    EXPECT_EQ(applied(i, "num_processes")->setting, "--ranks 4");
    EXPECT_EQ(applied(i, "fsdp_config.fsdp_backward_prefetch")->setting.rfind("--prefetch 1", 0),
              0u);
    EXPECT_NE(ignored(i, "fsdp_config.fsdp_auto_wrap_policy")->why.find("matches"),
              std::string::npos);
    // Every key of the file is listed.
    for (const char* key :
         {"compute_environment", "fsdp_config.fsdp_state_dict_type", "fsdp_config.fsdp_version",
          "tpu_env", "num_machines", "distributed_type", "mixed_precision"})
        EXPECT_TRUE(applied(i, key) || ignored(i, key)) << key;
}

TEST(configImportAccelerate, DeepSpeedFileIsReadAsADsConfigWithNumProcessesAsTheWorld) {
    const Imported i = importAccelerate("accelerate_deepspeed.yaml", acceleratedRun());
    // 16 = 2 × accumulation × 2 processes → accumulation 4.
    ASSERT_TRUE(applied(i, "deepspeed_config_file:train_batch_size"));
    EXPECT_EQ(
        applied(i, "deepspeed_config_file:train_batch_size")->setting.rfind("--grad-accum 4", 0),
        0u);
    EXPECT_EQ(applied(i, "deepspeed_config_file:zero_optimization.stage")->setting,
              "--strategy zero2");
    EXPECT_NE(
        ignored(i, "deepspeed_config.zero3_init_flag")->why.find("deepspeed_config_file decides"),
        std::string::npos);
}

TEST(configImportAccelerate, InlineDeepSpeedFields) {
    const Imported i = importAccelerate("accelerate_deepspeed_inline.yaml", acceleratedRun());
    EXPECT_EQ(applied(i, "deepspeed_config.zero_stage")->setting, "--strategy zero3");
    EXPECT_EQ(applied(i, "deepspeed_config.gradient_accumulation_steps")->setting,
              "--grad-accum 2");
    EXPECT_EQ(ignored(i, "deepspeed_config.offload_optimizer_device")->why,
              "offload tiers not in this build");
    EXPECT_EQ(applied(i, "mixed_precision")->setting.rfind("--precision bf16", 0), 0u);
}

TEST(configImportAccelerate, BadValuesNameTheKeyAndValue) {
    EXPECT_NE(accelerateError("distributed_type: TPU\n").find("distributed_type = 'TPU'"),
              std::string::npos);
    EXPECT_NE(accelerateError("distributed_type: FSDP\nfsdp_config:\n  fsdp_sharding_strategy: 7\n")
                  .find("fsdp_config.fsdp_sharding_strategy = '7'"),
              std::string::npos);
    EXPECT_NE(accelerateError("num_processes: -2\n").find("num_processes = '-2'"),
              std::string::npos);
    EXPECT_NE(accelerateError("distributed_type: FSDP\nfsdp_config:\n  fsdp_version: 3\n")
                  .find("must be in 1–2"),
              std::string::npos);
    EXPECT_NE(accelerateError("a: [1, 2\n").find("not valid YAML at line"), std::string::npos);
    EXPECT_NE(accelerateError("- 1\n- 2\n").find("must be a mapping"), std::string::npos);
    // The line is one line.
    EXPECT_EQ(accelerateError("a: [1, 2\n").find('\n'), std::string::npos);
}

Imported importAccelerateText(const std::string& text) {
    const Context c = acceleratedRun();
    return finish(parseAccelerateConfig(text, "acc.yaml", c), c);
}

// YAML merge keys (`<<: *anchor`) apply the anchored mapping; the mapping's own keys win.
TEST(configImportAccelerate, MergeKeysApplyTheAnchoredMapping) {
    const Imported i = importAccelerateText("fsdp_defaults: &fsdp\n"
                                            "  fsdp_sharding_strategy: SHARD_GRAD_OP\n"
                                            "  fsdp_backward_prefetch: BACKWARD_PRE\n"
                                            "distributed_type: FSDP\n"
                                            "fsdp_config:\n"
                                            "  <<: *fsdp\n"
                                            "  fsdp_sharding_strategy: FULL_SHARD\n");
    EXPECT_EQ(applied(i, "fsdp_config.fsdp_sharding_strategy")->setting.rfind("--strategy fsdp", 0),
              0u);
    EXPECT_NE(applied(i, "fsdp_config.fsdp_sharding_strategy")
                  ->setting.rfind("--strategy fsdp_grad_op", 0),
              0u)
        << "the mapping's own key wins";
    EXPECT_TRUE(applied(i, "fsdp_config.fsdp_backward_prefetch")) << "from the anchor";
    EXPECT_FALSE(ignored(i, "fsdp_config.<<"));
    // A list of anchors (the earlier wins), and a merge at the top level.
    const Imported top =
        importAccelerateText("base: &b {distributed_type: DEEPSPEED, num_processes: 2}\n"
                             "more: &m {num_processes: 4, mixed_precision: bf16}\n"
                             "<<: [*b, *m]\n"
                             "deepspeed_config: {zero_stage: 2}\n");
    EXPECT_EQ(applied(top, "num_processes")->setting, "--ranks 2");
    EXPECT_EQ(applied(top, "deepspeed_config.zero_stage")->setting, "--strategy zero2");
    EXPECT_TRUE(applied(top, "mixed_precision"));
    EXPECT_NE(accelerateError("distributed_type: FSDP\nfsdp_config:\n  <<: 3\n")
                  .find("fsdp_config.<< = '3': must name a mapping"),
              std::string::npos);
    // Aliases share nodes: ten lines that merge a mapping 2^10 times are refused, not expanded.
    std::string bomb = "a0: &a0 {x: 1}\n";
    for (int k = 1; k <= 10; ++k) {
        const std::string self = std::to_string(k), prev = std::to_string(k - 1);
        bomb.append("a").append(self).append(": &a").append(self).append(" {<<: [*a").append(prev);
        bomb.append(", *a").append(prev).append("]}\n");
    }
    bomb += "distributed_type: FSDP\nfsdp_config: {<<: [*a7, *a7, *a7, *a7, *a7]}\n";
    EXPECT_NE(accelerateError(bomb).find("merges in one file"), std::string::npos)
        << accelerateError(bomb);
}

// PyYAML (Accelerate) reads the last of a repeated key, yaml-cpp's lookups the first: a file
// that repeats a key is refused instead of being read differently from Accelerate.
TEST(configImportAccelerate, RepeatedOrNonNameKeysAreRefused) {
    EXPECT_NE(accelerateError("distributed_type: DEEPSPEED\ndistributed_type: FSDP\n")
                  .find("acc.yaml: distributed_type is given twice"),
              std::string::npos);
    EXPECT_NE(accelerateError(
                  "distributed_type: FSDP\nfsdp_config:\n  fsdp_sharding_strategy: FULL_SHARD\n"
                  "  fsdp_sharding_strategy: NO_SHARD\n")
                  .find("fsdp_config.fsdp_sharding_strategy is given twice"),
              std::string::npos);
    EXPECT_NE(
        accelerateError(
            "distributed_type: DEEPSPEED\ndeepspeed_config:\n  zero_stage: 1\n  zero_stage: 3\n")
            .find("deepspeed_config.zero_stage is given twice"),
        std::string::npos);
    EXPECT_NE(accelerateError("? [a, b]\n: c\ndistributed_type: NO\n").find("keys must be names"),
              std::string::npos);
}

// A key that is not UTF-8 made the JSON report's writer throw (exit 1, after the whole run).
TEST(configImportAccelerate, TextThatIsNotUtf8IsRefused) {
    EXPECT_EQ(accelerateError("distributed_type: NO\n\xff\xfe: 1\n"),
              "acc.yaml: not valid YAML: the file is not UTF-8 text");
    EXPECT_EQ(accelerateError("distributed_type: NO\nmain_training_function: \"\xc3\"\n"),
              "acc.yaml: not valid YAML: the file is not UTF-8 text");
    EXPECT_EQ(accelerateError("distributed_type: NO\nmain_training_function: caf\xc3\xa9\n"),
              "(no error)");
}

// Without a group the run failed later on a --hybrid-group the user never typed.
TEST(configImportAccelerate, HybridShardOverMachinesThatDoNotSplitTheRanksIsNamed) {
    const std::string e =
        accelerateError("distributed_type: FSDP\nnum_processes: 3\nnum_machines: 2\nfsdp_config:\n"
                        "  fsdp_sharding_strategy: HYBRID_SHARD\n");
    EXPECT_NE(e.find("acc.yaml: fsdp_config.fsdp_sharding_strategy = 'HYBRID_SHARD': shards inside "
                     "each machine, but the 3 ranks"),
              std::string::npos)
        << e;
    EXPECT_NE(
        accelerateError("distributed_type: FSDP\nnum_processes: 2\nnum_machines: 4\nfsdp_config:\n"
                        "  fsdp_sharding_strategy: 4\n")
            .find("num_machines 4"),
        std::string::npos);
    // A --strategy on the command line leaves the file's group unused.
    Context c = acceleratedRun();
    c.given = {{"--strategy", "zero3"}};
    const Imported i =
        finish(parseAccelerateConfig(
                   "distributed_type: FSDP\nnum_processes: 3\nnum_machines: 2\nfsdp_config:\n"
                   "  fsdp_sharding_strategy: HYBRID_SHARD\n",
                   "acc.yaml", c),
               c);
    EXPECT_EQ(ignored(i, "fsdp_config.fsdp_sharding_strategy")->why,
              "overridden by --strategy on the command line");
}

TEST(configImportAccelerate, RanksOnTheCommandLineWin) {
    Context c = acceleratedRun();
    c.given = {{"--ranks", "8"}};
    c.worldSize = 8;
    const Imported i = importAccelerate("accelerate_fsdp_hybrid.yaml", c);
    EXPECT_EQ(ignored(i, "num_processes")->why, "overridden by --ranks on the command line");
    // HYBRID_SHARD's group follows the ranks given: 8 over 2 machines.
    EXPECT_EQ(applied(i, "fsdp_config.fsdp_sharding_strategy")->setting, "--strategy fsdp_hybrid");
    const std::vector<std::string> want = {"--hybrid-group", "4"};
    EXPECT_TRUE(std::search(i.args.begin(), i.args.end(), want.begin(), want.end()) !=
                i.args.end());
}

} // namespace

// Hugging Face config.json: exact counts for the shipped presets (resources/presets/hf).
namespace {

HfModel hfPreset(const std::string& name) {
    const std::string path = std::string(SHARDSCOPE_SOURCE_DIR) + "/resources/presets/hf/" + name;
    return parseHfConfig(readConfigFile(path, "--model-config"), path);
}

std::uint64_t unitSum(const HfModel& m) {
    std::uint64_t s = 0;
    for (const auto& u : m.units)
        s += u.params;
    return s;
}

TEST(configImportHf, PublishedTotals) {
    // transformers' model.num_parameters() for each checkpoint.
    EXPECT_EQ(hfPreset("gpt2.json").params, 124'439'808u);
    EXPECT_EQ(hfPreset("llama-2-7b.json").params, 6'738'415'616u);
    EXPECT_EQ(hfPreset("mistral-7b.json").params, 7'241'732'096u);
    EXPECT_EQ(hfPreset("qwen2-0.5b.json").params, 494'032'768u);
}

TEST(configImportHf, UnitsAreEmbeddingLayersAndHead) {
    const HfModel llama = hfPreset("llama-2-7b.json");
    ASSERT_EQ(llama.units.size(), 34u);
    EXPECT_EQ(llama.units.front().name, "embedding");
    EXPECT_EQ(llama.units.front().params, 32000u * 4096u);
    EXPECT_EQ(llama.units[1].params, 202'383'360u); // 4·4096² + 3·4096·11008 + 2·4096
    EXPECT_EQ(llama.units.back().params, 4096u + 32000u * 4096u); // final norm + untied head
    EXPECT_EQ(unitSum(llama), llama.params);
    // Tied: the head's weight lives in the embedding's unit.
    const HfModel qwen = hfPreset("qwen2-0.5b.json");
    EXPECT_TRUE(qwen.tiedEmbeddings);
    EXPECT_EQ(qwen.units.back().params, 896u);
    EXPECT_EQ(unitSum(qwen), qwen.params);
    const HfModel gpt2 = hfPreset("gpt2.json");
    EXPECT_EQ(gpt2.units.front().params, 50257u * 768u + 1024u * 768u); // wte + wpe
    EXPECT_EQ(gpt2.units[1].params, 7'087'872u);
}

TEST(configImportHf, LargestLayerAsDeepSpeedCountsIt) {
    EXPECT_EQ(hfPreset("gpt2.json").largestLayerParams, 50257u * 768u);
    EXPECT_EQ(hfPreset("llama-2-7b.json").largestLayerParams, 131'072'000u);
    EXPECT_EQ(hfPreset("qwen2-0.5b.json").largestLayerParams, 151936u * 896u);
    // A model whose MLP is wider than its embedding: the largest layer is one linear.
    const HfModel wide =
        parseHfConfig(R"({"model_type": "llama", "vocab_size": 100, "hidden_size": 64,
        "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 1000})",
                      "wide.json");
    EXPECT_EQ(wide.largestLayerParams, 64'000u);
    EXPECT_EQ(wide.largestLayer, "model.layers.0.mlp.gate_proj");
}

TEST(configImportHf, GroupedQueryAttentionHeadDimAndBiases) {
    // Mistral: 8 key/value heads of 128 → k and v are 4096 × 1024.
    const HfModel mistral = hfPreset("mistral-7b.json");
    EXPECT_EQ(mistral.units[1].params,
              2u * 4096u * 4096u + 2u * 4096u * 1024u + 3u * 4096u * 14336u + 2u * 4096u);
    // Qwen2's q, k and v carry biases (896 + 128 + 128), o does not.
    const HfModel qwen = hfPreset("qwen2-0.5b.json");
    EXPECT_EQ(qwen.units[1].params, 896u * 896u + 896u + 2u * (896u * 128u + 128u) + 896u * 896u +
                                        3u * 896u * 4864u + 2u * 896u);
    // head_dim given explicitly (hidden 64, 4 heads of 32: q is 64 × 128).
    const HfModel explicitDim =
        parseHfConfig(R"({"model_type": "mistral", "vocab_size": 10, "hidden_size": 64,
        "num_hidden_layers": 1, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 32, "intermediate_size": 8})",
                      "x.json");
    EXPECT_EQ(explicitDim.units[1].params,
              64u * 128u + 2u * 64u * 64u + 128u * 64u + 3u * 64u * 8u + 2u * 64u);
}

TEST(configImportHf, OtherModelTypesAndBadFieldsAreOneLine) {
    auto error = [](const std::string& text) {
        try {
            parseHfConfig(text, "c.json");
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
            return std::string(e.what());
        }
        return std::string("(no error)");
    };
    EXPECT_NE(error(R"({"model_type": "mixtral"})")
                  .find("model_type 'mixtral' is not one ShardScope counts"),
              std::string::npos);
    EXPECT_NE(error(R"({"model_type": "llama", "vocab_size": 10})").find("hidden_size is missing"),
              std::string::npos);
    EXPECT_NE(error(R"({"model_type": "gpt2", "vocab_size": -1})").find("vocab_size = -1"),
              std::string::npos);
    EXPECT_NE(
        error(
            R"({"model_type": "llama", "vocab_size": 10, "hidden_size": 64, "num_hidden_layers": 1,
        "num_attention_heads": 4, "num_key_value_heads": 3, "intermediate_size": 8})")
            .find("not a multiple of num_key_value_heads"),
        std::string::npos);
    EXPECT_NE(error(R"({"model_type": "gpt2", "vocab_size": 1e30})").find("vocab_size"),
              std::string::npos);
    EXPECT_NE(error("{").find("not valid JSON"), std::string::npos);
    EXPECT_NE(error("[]").find("must be a JSON object"), std::string::npos);
}

// 4096 layers of 2^52 + 5·2^20 parameters each add up to 2^64 + 21 G: a wrapped uint64 would
// read as a plausible 21 B-parameter model. head_dim is bounded with the heads it multiplies.
TEST(configImportHf, AHugeHeadDimIsRefusedBeforeTheCountWraps) {
    const std::string text =
        R"({"model_type": "llama", "vocab_size": 1, "hidden_size": 1048576, "num_hidden_layers": 4096,
        "num_attention_heads": 1024, "num_key_value_heads": 1024, "head_dim": 1048576, "intermediate_size": 1})";
    try {
        const HfModel m = parseHfConfig(text, "wrap.json");
        FAIL() << "accepted, " << m.params << " params";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
        EXPECT_NE(
            std::string(e.what()).find("wrap.json: num_attention_heads 1024 × head_dim 1048576"),
            std::string::npos)
            << e.what();
    }
    // The widest accepted attention keeps the count exact.
    const HfModel wide =
        parseHfConfig(R"({"model_type": "llama", "vocab_size": 1, "hidden_size": 1048576,
        "num_hidden_layers": 4096, "num_attention_heads": 4, "head_dim": 1048576, "intermediate_size": 1})",
                      "w.json");
    EXPECT_EQ(unitSum(wide), wide.params);
    EXPECT_GT(wide.params, wide.units[1].params * 4095);
}

} // namespace

namespace {

// A value nested 100000 deep fits in 1 MiB; the message names it instead of printing it
// (printing recursed once per level and overflowed the stack).
TEST(configImportDs, DeeplyNestedValuesAreNamedNotPrinted) {
    const std::string deep = std::string(100000, '[') + std::string(100000, ']');
    const Context c = runContext();
    auto message = [&](const auto& parse) {
        try {
            parse();
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
            return std::string(e.what());
        }
        return std::string("(no error)");
    };
    EXPECT_EQ(message([&] { parseDsConfig(deep, "d.json", c); }),
              "d.json: the file = (a list): must be a JSON object");
    EXPECT_EQ(message([&] {
                  parseHfConfig(R"({"model_type": "llama", "vocab_size": )" + deep + "}", "h.json");
              }),
              "h.json: vocab_size = (a list): must be a whole number");
    // A flat list is still shown.
    EXPECT_EQ(message([&] { parseDsConfig("[1, 2]", "d.json", c); }),
              "d.json: the file = [1,2]: must be a JSON object");
}

TEST(configImportDs, AnEmptyFileIsNamedEmpty) {
    const std::string path = ::testing::TempDir() + "config_import_empty.json";
    { std::ofstream(path).flush(); }
    try {
        readConfigFile(path, "--ds-config");
        FAIL() << "read an empty file";
    } catch (const Error& e) {
        EXPECT_EQ(std::string(e.what()), "--ds-config: " + path + " is empty");
    }
    std::remove(path.c_str());
}

TEST(configImportDs, AFileWithTooManyKeysIsRefused) {
    std::string text = "{";
    for (int i = 0; i < 201; ++i)
        text += (i ? ",\"k" : "\"k") + std::to_string(i) + "\": 1";
    text += "}";
    const Context c = runContext();
    try {
        finish(parseDsConfig(text, "big.json", c), c, "big.json");
        FAIL() << "accepted 201 keys";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("big.json: has 201 keys"), std::string::npos)
            << e.what();
    }
}

} // namespace
