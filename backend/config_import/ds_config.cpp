#include "config_import/ds_config.h"

#include "core/error.h"
#include "core/json_strict.h"
#include "plan/pipeline.h"
#include "runconfig/problems.h"

#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <string_view>
#include <vector>

namespace shardscope::config_import {

namespace {

using nlohmann::json;

std::string shown(const json& v) {
    return shownJson(v);
}

class DsReader {
public:
    DsReader(std::string source, std::string prefix, const Context& context)
        : source_(std::move(source)), prefix_(std::move(prefix)), ctx_(context) {}

    Parsed read(const json& root) {
        if (!root.is_object()) bad("", root, "must be a JSON object");
        for (const auto& [key, value] : root.items())
            topLevel(key, value);
        finishPrecision();
        finishBatch();
        finishZero();
        finishAio();
        return std::move(out_);
    }

private:
    [[noreturn]] void bad(const std::string& key, const json& v, const std::string& what) const {
        const std::string path = prefix_ + key;
        throwInvalid(source_ + ": " + (path.empty() ? std::string("the file") : path) + " = " +
                     shown(v) + ": " + what);
    }
    void ignore(const std::string& key, const std::string& why) {
        out_.ignored.push_back({prefix_ + key, why});
    }
    void set(const std::string& key, const std::string& flag, const std::string& value,
             const std::string& note = {}) {
        out_.settings.push_back({prefix_ + key, flag, value, note});
    }
    static bool isAuto(const json& v) { return v.is_string() && v.get<std::string>() == "auto"; }

    bool boolean(const std::string& key, const json& v) const {
        if (!v.is_boolean()) bad(key, v, "must be true or false");
        return v.get<bool>();
    }
    // A whole number in [min, max] (DeepSpeed writes sizes like 5e8 as JSON numbers).
    std::int64_t integer(const std::string& key, const json& v, std::int64_t min,
                         std::int64_t max) const {
        if (!v.is_number()) bad(key, v, "must be a number");
        const double d = v.get<double>();
        if (!std::isfinite(d) || d != std::floor(d)) bad(key, v, "must be a whole number");
        if (d < static_cast<double>(min) || d > static_cast<double>(max))
            bad(key, v, "must be in " + std::to_string(min) + "–" + std::to_string(max));
        return static_cast<std::int64_t>(d);
    }
    double real(const std::string& key, const json& v, double min, double max) const {
        if (!v.is_number()) bad(key, v, "must be a number");
        const double d = v.get<double>();
        if (!std::isfinite(d) || d < min || d > max)
            bad(key, v, "must be a finite number in [" + fmt(min) + ", " + fmt(max) + "]");
        return d;
    }
    // The shortest text that reads back as the same double.
    static std::string fmt(double d) {
        char text[32];
        for (int digits = 6; digits <= 17; ++digits) {
            std::snprintf(text, sizeof(text), "%.*g", digits, d);
            if (std::strtod(text, nullptr) == d) break;
        }
        return text;
    }
    static std::string fmtShort(double d) {
        char text[32];
        std::snprintf(text, sizeof(text), "%g", d);
        return text;
    }

    void topLevel(const std::string& key, const json& v) {
        if (key == "zero_optimization") return zero(v);
        if (key == "bf16" || key == "fp16") return precisionBlock(key, v);
        if (key == "optimizer") return optimizer(v);
        if (key == "train_batch_size") return batchValue(key, v, batch_);
        if (key == "train_micro_batch_size_per_gpu") return batchValue(key, v, micro_);
        if (key == "gradient_accumulation_steps") return batchValue(key, v, accum_);
        if (key == "gradient_clipping")
            return engineMatch(key, v, engine_.clipNorm, "clips the global gradient norm at");
        if (key == "aio") return aio(v);
        if (key == "pipeline") return pipeline(v);
        if (key == "scheduler")
            return ignore(key, "this build trains at a constant learning rate (no scheduler)");
        if (key == "steps_per_print" || key == "wall_clock_breakdown" || key == "flops_profiler" ||
            key == "tensorboard" || key == "wandb" || key == "csv_monitor" || key == "comms_logger")
            return ignore(key, "logging and profiling: ShardScope records every event itself");
        ignore(key, "not a setting ShardScope models");
    }

    // train_batch_size / micro-batch / accumulation: "auto" or a positive integer.
    void batchValue(const std::string& key, const json& v, std::optional<std::int64_t>& slot) {
        if (isAuto(v)) {
            autoKeys_.push_back(key);
            return;
        }
        slot = integer(key, v, 1, std::numeric_limits<std::int32_t>::max());
        keys_[&slot] = key;
    }

    void precisionBlock(const std::string& block, const json& v) {
        if (!v.is_object()) bad(block, v, "must be an object");
        for (const auto& [k, value] : v.items()) {
            const std::string key = block + "." + k;
            if (k == "enabled") {
                if (isAuto(value)) {
                    ignore(key, "auto: the run keeps its --precision (bf16 unless given)");
                    continue;
                }
                const bool on = boolean(key, value);
                (block == "bf16" ? bf16_ : fp16_) = on;
            } else if (block == "fp16") {
                ignore(key, "this build's 16-bit format is bf16, which needs no loss scaling");
            } else {
                ignore(key, "not a setting ShardScope models");
            }
        }
    }

    void finishPrecision() {
        if (bf16_.value_or(false) && fp16_.value_or(false))
            bad("fp16.enabled", true,
                "fp16 and bf16 cannot both be enabled (DeepSpeed refuses this too)");
        if (bf16_.value_or(false))
            set("bf16.enabled", "--precision", "bf16");
        else if (fp16_.value_or(false))
            set("fp16.enabled", "--precision", "bf16",
                "this build's 16-bit format is bf16: the same bytes per parameter");
        else if (bf16_ || fp16_)
            set(bf16_ ? "bf16.enabled" : "fp16.enabled", "--precision", "fp32",
                "neither bf16 nor fp16: fp32 throughout");
        if (bf16_.value_or(false) || fp16_.value_or(false))
            halfPrecision_ = true;
        else if (bf16_ || fp16_)
            halfPrecision_ = false;
    }

    // DeepSpeed's _configure_train_batch_size: the missing one of the three is derived, and the
    // product must equal the batch. Flags given on the command line take the place of the file's.
    void finishBatch() {
        std::int64_t world = ctx_.worldSize;
        auto flagValue = [&](const char* flag) -> std::optional<std::int64_t> {
            const auto it = ctx_.given.find(flag);
            if (it == ctx_.given.end()) return std::nullopt;
            std::int64_t v = 0;
            try {
                v = std::stoll(it->second);
            } catch (const std::exception&) {
                return std::nullopt; // the flag parser names it
            }
            // It divides the batch below: a zero or negative one is named here, as the flag parser
            // would.
            if (v < 1) throwInvalid(std::string(flag) + " must be at least 1, got " + it->second);
            return v;
        };
        // Each factor fits an int (the world up to 2^30 in estimate): their product may not fit 64
        // bits.
        const auto times = [&](std::int64_t x, std::int64_t y) {
            std::int64_t p = 0;
            if (__builtin_mul_overflow(x, y, &p))
                throwInvalid(source_ +
                             ": micro-batch × gradient accumulation × world size is past 2^63");
            return p;
        };
        // DeepSpeed's batch counts data-parallel ranks: the world over the pipeline's stages and
        // the tensor-parallel ranks (a mesh the run refuses is named by the run's own checks).
        const std::int64_t stages = flagValue("--pp").value_or(pipeStages_.value_or(1));
        const std::int64_t tensor = flagValue("--tp").value_or(1);
        if (stages * tensor > 1 && world % (stages * tensor) == 0) world /= stages * tensor;
        const std::string size = world == ctx_.worldSize ? "world size" : "data-parallel size";
        std::optional<std::int64_t> micro = flagValue("--micro-batch");
        std::optional<std::int64_t> accum = flagValue("--grad-accum");
        if (!micro) micro = micro_;
        if (!accum) accum = accum_;
        std::string derivedMicro, derivedAccum;
        if (batch_ && !micro && accum) {
            if (*batch_ % times(*accum, world) != 0)
                bad(keys_[&batch_], *batch_,
                    "is not a multiple of gradient_accumulation_steps " + std::to_string(*accum) +
                        " × " + size + " " + std::to_string(world));
            micro = *batch_ / times(*accum, world);
            derivedMicro = "train_batch_size / (accumulation × " + size + ")";
        } else if (batch_ && micro && !accum) {
            if (*batch_ % times(*micro, world) != 0)
                bad(keys_[&batch_], *batch_,
                    "is not a multiple of the micro-batch " + std::to_string(*micro) + " × " +
                        size + " " + std::to_string(world));
            accum = *batch_ / times(*micro, world);
            derivedAccum = "train_batch_size / (micro-batch × " + size + ")";
        } else if (batch_ && !micro && !accum) {
            if (*batch_ % world != 0)
                bad(keys_[&batch_], *batch_,
                    "is not a multiple of the " + size + " " + std::to_string(world));
            micro = *batch_ / world;
            derivedMicro = "train_batch_size / " + size;
        }
        const std::int64_t m = micro.value_or(ctx_.defaultMicroBatch);
        const std::int64_t a = accum.value_or(1);
        const std::int64_t total = times(times(m, a), world);
        if (batch_ && *batch_ != total)
            bad(keys_[&batch_], *batch_,
                "must equal micro-batch " + std::to_string(m) + " × gradient accumulation " +
                    std::to_string(a) + " × " + size + " " + std::to_string(world) + " = " +
                    std::to_string(total));
        const runconfig::Limit& mb = runconfig::limitOf(runconfig::Field::MicroBatch);
        const runconfig::Limit& ga = runconfig::limitOf(runconfig::Field::GradAccum);
        if (micro_)
            set(keys_[&micro_], "--micro-batch", std::to_string(*micro_));
        else if (!derivedMicro.empty()) {
            if (m < mb.min || m > mb.max)
                bad(keys_[&batch_], *batch_,
                    "gives a micro-batch of " + std::to_string(m) + ", outside " +
                        std::to_string(mb.min) + "–" + std::to_string(mb.max));
            set(keys_[&batch_], "--micro-batch", std::to_string(m), derivedMicro);
        }
        if (accum_)
            set(keys_[&accum_], "--grad-accum", std::to_string(*accum_));
        else if (!derivedAccum.empty()) {
            if (a < ga.min || a > ga.max)
                bad(keys_[&batch_], *batch_,
                    "gives a gradient accumulation of " + std::to_string(a) + ", outside " +
                        std::to_string(ga.min) + "–" + std::to_string(ga.max));
            set(keys_[&batch_], "--grad-accum", std::to_string(a), derivedAccum);
        }
        if (batch_ && derivedMicro.empty() && derivedAccum.empty())
            out_.ignored.push_back({prefix_ + keys_[&batch_],
                                    "checked: " + std::to_string(*batch_) + " = " +
                                        std::to_string(m) + " × " + std::to_string(a) + " × " +
                                        std::to_string(world) + " (it sets nothing else)"});
        for (const std::string& key : autoKeys_) {
            const std::string why =
                key == "train_batch_size"
                    ? "auto: micro-batch × accumulation × world size = " + std::to_string(total)
                : key == "train_micro_batch_size_per_gpu"
                    ? "auto: the run's micro-batch (" + std::to_string(m) + ")"
                    : "auto: the run's gradient accumulation (" + std::to_string(a) + ")";
            ignore(key, why);
        }
    }

    void optimizer(const json& v) {
        if (!v.is_object()) bad("optimizer", v, "must be an object");
        bool adam = true;
        if (v.contains("type")) {
            const json& t = v["type"];
            if (!t.is_string()) bad("optimizer.type", t, "must be a string");
            const std::string type = t.get<std::string>();
            adam = type == "Adam" || type == "AdamW" || type == "adam" || type == "adamw";
            ignore("optimizer.type",
                   adam ? "matches: the engine trains with AdamW (decoupled weight decay)"
                        : "this build trains with AdamW only; '" + type + "' is not modelled");
        }
        for (const auto& [k, value] : v.items()) {
            if (k == "type") continue;
            if (k != "params") {
                ignore("optimizer." + k, "not a setting ShardScope models");
                continue;
            }
            if (!value.is_object()) bad("optimizer.params", value, "must be an object");
            for (const auto& [p, pv] : value.items())
                optimizerParam(p, pv, adam);
        }
    }

    void optimizerParam(const std::string& p, const json& v, bool adam) {
        const std::string key = "optimizer.params." + p;
        if (!adam) return ignore(key, "belongs to an optimizer this build does not model");
        if (p == "lr") {
            if (isAuto(v))
                return ignore(key, "auto: the run's learning rate (" +
                                       fmtShort(ctx_.defaultLearningRate) + " unless --lr)");
            const double lr = real(key, v, 0.0, runconfig::kMaxLearningRate);
            return set(key, "--lr", fmt(lr));
        }
        if (p == "betas") {
            if (isAuto(v))
                return ignore(key, "auto: the engine's betas (" + fmtShort(engine_.beta1) + ", " +
                                       fmtShort(engine_.beta2) + ")");
            if (!v.is_array() || v.size() != 2) bad(key, v, "must be a list of two numbers");
            const double b1 = real(key, v[0], 0.0, 1.0), b2 = real(key, v[1], 0.0, 1.0);
            if (b1 == engine_.beta1 && b2 == engine_.beta2)
                return ignore(key, "matches the engine's betas (nothing to set)");
            return ignore(key, "the engine's AdamW uses betas (" + fmtShort(engine_.beta1) + ", " +
                                   fmtShort(engine_.beta2) +
                                   "), fixed in this build; memory does not depend on them");
        }
        if (p == "eps") return engineMatch(key, v, engine_.eps, "uses eps");
        if (p == "weight_decay")
            return engineMatch(key, v, engine_.weightDecay, "uses a decoupled weight decay of");
        if (p == "adam_w_mode" || p == "torch_adam" || p == "fused")
            return ignore(key, "implementation choice: the engine's AdamW is its own kernel");
        ignore(key, "not a setting ShardScope models");
    }

    // A key the engine has a fixed value for: matches, or ignored naming the engine's value.
    void engineMatch(const std::string& key, const json& v, double engineValue,
                     const std::string& what) {
        if (isAuto(v)) return ignore(key, "auto: the engine " + what + " " + fmtShort(engineValue));
        const double d = real(key, v, 0.0, 1e9);
        if (d == engineValue)
            return ignore(key, "matches: the engine " + what + " " + fmtShort(engineValue) +
                                   " (nothing to set)");
        ignore(key, "the engine " + what + " " + fmtShort(engineValue) + ", fixed in this build");
    }

    void zero(const json& v) {
        if (!v.is_object()) bad("zero_optimization", v, "must be an object");
        for (const auto& [k, value] : v.items()) {
            const std::string key = "zero_optimization." + k;
            if (k == "stage") {
                const std::int64_t s = integer(key, value, 0, 3);
                static const char* names[] = {"ddp", "zero1", "zero2", "zero3"};
                set(key, "--strategy", names[s], s == 0 ? "stage 0 = plain data parallelism" : "");
                stage_ = s;
            } else if (k == "reduce_bucket_size" || k == "allgather_bucket_size" ||
                       k == "stage3_prefetch_bucket_size" || k == "stage3_max_live_parameters" ||
                       k == "stage3_param_persistence_threshold") {
                if (isAuto(value))
                    autoZero_.push_back(k);
                else
                    zeroSizes_[k] = integer(key, value, 0, std::int64_t{1} << 53);
            } else if (k == "offload_optimizer" || k == "offload_param") {
                offload(key, value,
                        k == "offload_optimizer" ? "--offload-optimizer" : "--offload-params");
            } else if (k == "overlap_comm") {
                boolean(key, value);
                ignore(key, "the engine's overlap follows from the strategy and --prefetch "
                            "(prefetched all-gathers run during compute)");
            } else if (k == "contiguous_gradients") {
                const bool on = boolean(key, value);
                ignore(key, on ? "matches: gradients always live in one flat buffer per unit "
                                 "(nothing to set)"
                               : "gradients always live in one flat buffer per unit in this build");
            } else {
                ignore(key, "not a setting ShardScope models");
            }
        }
    }

    void offload(const std::string& block, const json& v, const std::string& flag) {
        if (!v.is_object()) bad(block, v, "must be an object");
        for (const auto& [k, value] : v.items()) {
            const std::string key = block + "." + k;
            if (k == "device") {
                if (!value.is_string()) bad(key, value, "must be \"none\", \"cpu\" or \"nvme\"");
                const std::string d = value.get<std::string>();
                fileDevice_[flag] = d;
                if (d == "none")
                    ignore(key, "none: the states stay on the device (nothing to set)");
                else if (d == "cpu")
                    set(key, flag, "host");
                else if (d == "nvme")
                    set(key, flag, "nvme");
                else
                    bad(key, value, "must be \"none\", \"cpu\" or \"nvme\"");
            } else if (k == "nvme_path") {
                if (!value.is_string() || value.get<std::string>().empty())
                    bad(key, value, "must be a folder path");
                // As DeepSpeed: the path counts only where this block's device is nvme.
                nvmePaths_.push_back({prefix_ + key, "--nvme-dir", value.get<std::string>(), ""});
            } else if (k == "pin_memory") {
                boolean(key, value);
                ignore(key, "page-locked host memory changes transfer speed, not the bytes "
                            "ShardScope accounts");
            } else {
                ignore(key, "not a setting ShardScope models");
            }
        }
    }

    // DeepSpeed's "pipeline" block (its runtime config: stages, partition, seed_layers,
    // activation_checkpoint_interval, pipe_partitioned, grad_partitioned). DeepSpeed takes the
    // stages from PipelineModule(num_stages=…) in code; a number here sets --pp. Its micro-batches
    // are gradient_accumulation_steps, as ShardScope's --micro-batches are --grad-accum.
    void pipeline(const json& v) {
        if (!v.is_object()) bad("pipeline", v, "must be an object");
        for (const auto& [k, value] : v.items()) {
            const std::string key = "pipeline." + k;
            if (k == "stages") {
                if (isAuto(value))
                    ignore(key, "auto: DeepSpeed takes the stages from PipelineModule(num_stages) "
                                "in code; give --pp P");
                else {
                    pipeStages_ = integer(key, value, 1, plan::kMaxPipeStages);
                    set(key, "--pp", std::to_string(*pipeStages_));
                }
            } else if (k == "partition") {
                if (!value.is_string()) bad(key, value, "must be a partition method (a string)");
                const std::string m = value.get<std::string>();
                ignore(key, m == "uniform"
                                ? "matches: stages of consecutive layers, as even as possible "
                                  "(nothing to set)"
                                : "ShardScope splits the layers evenly by count (DeepSpeed's "
                                  "\"uniform\"); its blocks are equal, so a split by parameters "
                                  "differs only by the embedding and the head");
            } else if (k == "activation_checkpoint_interval") {
                const std::int64_t every = integer(key, value, 0, 1 << 20);
                if (every == 1)
                    set(key, "--checkpointing", "", "every block keeps only its input");
                else
                    ignore(key, every == 0 ? "0: no activation checkpointing (nothing to set)"
                                           : "ShardScope checkpoints every block or none "
                                             "(interval 1 or 0)");
            } else if (k == "pipe_partitioned" || k == "grad_partitioned") {
                boolean(key, value);
                ignore(key, "splitting a message over the tensor-parallel ranks is not "
                            "modelled: each stage boundary carries the whole activation");
            } else if (k == "seed_layers") {
                boolean(key, value);
                ignore(key, "initialisation is a pure function of --seed on every stage already");
            } else {
                ignore(key, "not a setting ShardScope models");
            }
        }
    }

    // DeepSpeed's async I/O settings for the NVMe tier: block size and queue depth map onto the
    // NVMe store's (offload/nvme_store.h); they apply only where something goes to NVMe.
    void aio(const json& v) {
        if (!v.is_object()) bad("aio", v, "must be an object");
        for (const auto& [k, value] : v.items()) {
            const std::string key = "aio." + k;
            if (k == "block_size") {
                const std::int64_t b = integer(key, value, 4096, std::int64_t{1} << 30);
                if (b % 4096 != 0) bad(key, value, "must be a multiple of 4096");
                aioSettings_.push_back({prefix_ + key, "--aio-block-bytes", std::to_string(b), ""});
            } else if (k == "queue_depth") {
                aioSettings_.push_back({prefix_ + key, "--aio-queue-depth",
                                        std::to_string(integer(key, value, 1, 1024)), ""});
            } else if (k == "thread_count" || k == "intra_op_parallelism") {
                integer(key, value, 1, 1024);
                ignore(key, "each rank's NVMe transfers are submitted by the rank itself "
                            "(io_uring); more threads change "
                            "speed, not the bytes ShardScope accounts");
            } else if (k == "single_submit" || k == "overlap_events") {
                boolean(key, value);
                ignore(key, "how libaio batches submissions; the NVMe tier keeps up to queue_depth "
                            "blocks in flight "
                            "through io_uring (nothing to set)");
            } else if (k == "use_gds") {
                boolean(key, value);
                ignore(key,
                       "GPUDirect Storage is not modelled: NVMe transfers go through host memory");
            } else {
                ignore(key, "not a setting ShardScope models");
            }
        }
    }

    // The aio settings become flags only when a tier is on NVMe (the file's offload blocks or the
    // command line's flags): the flags are refused otherwise.
    void finishAio() {
        // Each tier as it will run: the command line's flag wins over the file's device.
        bool nvme = false;
        for (const char* flag : {"--offload-optimizer", "--offload-params"}) {
            auto it = ctx_.given.find(flag);
            if (it == ctx_.given.end() && std::string_view(flag) == "--offload-params")
                it = ctx_.given.find("--offload-param");
            const auto file = fileDevice_.find(flag);
            const std::string device = it != ctx_.given.end()      ? it->second
                                       : file != fileDevice_.end() ? file->second
                                                                   : "";
            nvme = nvme || device == "nvme";
        }
        for (const Setting& s : aioSettings_) {
            if (nvme)
                out_.settings.push_back(s);
            else
                out_.ignored.push_back(
                    {s.key, "an NVMe tier setting; nothing is offloaded to nvme"});
        }
        if (nvmePaths_.empty()) return;
        if (!nvme) {
            for (const Setting& s : nvmePaths_)
                out_.ignored.push_back({s.key, "used only where the device is nvme"});
            return;
        }
        // One folder for every NVMe tier: the first path given (a second, different one is named).
        out_.settings.push_back(nvmePaths_.front());
        for (std::size_t i = 1; i < nvmePaths_.size(); ++i)
            if (nvmePaths_[i].value != nvmePaths_.front().value)
                out_.ignored.push_back(
                    {nvmePaths_[i].key, "ShardScope keeps every NVMe tier in one folder: " +
                                            nvmePaths_.front().key + "'s"});
    }

    // Sizes in elements → this build's knobs. "auto" as Hugging Face resolves it from the hidden
    // size.
    void finishZero() {
        const std::int64_t h = ctx_.hiddenSize;
        for (const std::string& k : autoZero_) {
            if (h <= 0) {
                ignore("zero_optimization." + k, "auto: resolved from the model's hidden size, "
                                                 "which this command does not know");
                continue;
            }
            const std::int64_t value =
                k == "stage3_prefetch_bucket_size"
                    ? static_cast<std::int64_t>(0.9 * static_cast<double>(h * h))
                : k == "stage3_param_persistence_threshold" ? 10 * h
                : k == "stage3_max_live_parameters"         ? std::int64_t{1'000'000'000}
                                                            : h * h;
            zeroSizes_[k] = value;
            autoNote_[k] = k == "stage3_prefetch_bucket_size"
                               ? "auto: 0.9 × hidden² = " + std::to_string(value)
                           : k == "stage3_param_persistence_threshold"
                               ? "auto: 10 × hidden = " + std::to_string(value)
                           : k == "stage3_max_live_parameters"
                               ? "auto: DeepSpeed's default 1e9"
                               : "auto: hidden² = " + std::to_string(value);
        }
        auto note = [&](const std::string& k, const std::string& more) {
            const auto it = autoNote_.find(k);
            if (it == autoNote_.end()) return more;
            return more.empty() ? it->second : it->second + "; " + more;
        };
        const int elementBytes = halfPrecision_.value_or(true) ? 2 : 4; // the run's default is bf16
        const auto reduce = zeroSizes_.find("reduce_bucket_size");
        const auto gather = zeroSizes_.find("allgather_bucket_size");
        if (reduce != zeroSizes_.end()) {
            const std::int64_t e = std::max<std::int64_t>(reduce->second, 1);
            set("zero_optimization.reduce_bucket_size", "--bucket-bytes",
                std::to_string(e * elementBytes),
                note("reduce_bucket_size",
                     std::to_string(e) + " elements × " + std::to_string(elementBytes) + " bytes"));
        }
        if (gather != zeroSizes_.end()) {
            const std::string key = "zero_optimization.allgather_bucket_size";
            if (reduce == zeroSizes_.end()) {
                const std::int64_t e = std::max<std::int64_t>(gather->second, 1);
                set(key, "--bucket-bytes", std::to_string(e * elementBytes),
                    note("allgather_bucket_size", std::to_string(e) + " elements × " +
                                                      std::to_string(elementBytes) + " bytes"));
            } else if (gather->second == reduce->second) {
                ignore(key, "matches reduce_bucket_size: the engine has one bucket size "
                            "(--bucket-bytes) for both");
            } else {
                ignore(key, "the engine has one bucket size (--bucket-bytes) for both collectives; "
                            "reduce_bucket_size sets it");
            }
        }
        const bool stage3 = stage_.value_or(3) == 3;
        const std::uint64_t block = ctx_.blockParams;
        auto blocks = [&](const std::string& k, const std::string& flag, std::int64_t min,
                          runconfig::Field field) {
            const auto it = zeroSizes_.find(k);
            if (it == zeroSizes_.end()) return;
            const std::string key = "zero_optimization." + k;
            if (!stage3)
                return ignore(key, "a ZeRO stage 3 setting; stage " + std::to_string(*stage_) +
                                       " does not use it");
            if (block == 0)
                return ignore(
                    key,
                    "counted in whole decoder blocks here, whose size this command does not know");
            const runconfig::Limit& l = runconfig::limitOf(field);
            const std::int64_t n = std::clamp<std::int64_t>(
                it->second / static_cast<std::int64_t>(block), std::max(min, l.min), l.max);
            set(key, flag, std::to_string(n),
                note(k, std::to_string(it->second) + " elements ÷ " + std::to_string(block) +
                            " per decoder block, in whole blocks"));
        };
        blocks("stage3_prefetch_bucket_size", "--prefetch", 0, runconfig::Field::Prefetch);
        blocks("stage3_max_live_parameters", "--max-inflight", 1, runconfig::Field::MaxInflight);
        if (const auto it = zeroSizes_.find("stage3_param_persistence_threshold");
            it != zeroSizes_.end()) {
            const std::string key = "zero_optimization.stage3_param_persistence_threshold";
            if (!stage3)
                ignore(key, "a ZeRO stage 3 setting; stage " + std::to_string(*stage_) +
                                " does not use it");
            else
                set(key, "--persistence-threshold", std::to_string(it->second),
                    note("stage3_param_persistence_threshold", ""));
        }
    }

    std::string source_, prefix_;
    const Context& ctx_;
    EngineOptimizer engine_;
    Parsed out_;
    std::optional<std::int64_t> batch_, micro_, accum_;
    std::optional<std::int64_t> pipeStages_; // pipeline.stages when a number
    std::map<const std::optional<std::int64_t>*, std::string> keys_;
    std::vector<std::string> autoKeys_;
    std::optional<bool> bf16_, fp16_, halfPrecision_;
    std::optional<std::int64_t> stage_;
    std::map<std::string, std::int64_t> zeroSizes_;
    std::vector<std::string> autoZero_;
    std::map<std::string, std::string> autoNote_;
    std::vector<Setting> aioSettings_;
    std::map<std::string, std::string> fileDevice_; // an offload flag → the file's device for it
    std::vector<Setting> nvmePaths_;
};

} // namespace

Parsed parseDsConfig(const nlohmann::json& root, const std::string& source, const Context& context,
                     const std::string& keyPrefix) {
    return DsReader(source, keyPrefix, context).read(root);
}

Parsed parseDsConfig(const std::string& text, const std::string& source, const Context& context) {
    json root;
    try {
        root = json::parse(text, StrictJson());
    } catch (const JsonRefused& e) {
        throwInvalid(source + ": " + e.what());
    } catch (const json::parse_error& e) {
        throwInvalid(source + ": not valid JSON at byte " + std::to_string(e.byte) + " (" +
                     std::string(e.what()).substr(std::string(e.what()).rfind(':') + 2) + ")");
    } catch (const json::exception& e) { // a number past double's range (1e400) and the like
        throwInvalid(source + ": not valid JSON (" +
                     std::string(e.what()).substr(std::string(e.what()).rfind(']') + 2) + ")");
    }
    return parseDsConfig(root, source, context, "");
}

} // namespace shardscope::config_import
