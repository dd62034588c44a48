#include "config_import/accelerate.h"

#include "config_import/ds_config.h"
#include "core/error.h"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <optional>
#include <set>
#include <string_view>
#include <vector>
#include <yaml-cpp/yaml.h>

namespace shardscope::config_import {

namespace {

class AccelerateReader {
public:
    AccelerateReader(std::string source, const Context& context)
        : source_(std::move(source)), ctx_(context) {}

    Parsed read(YAML::Node root) {
        if (!root.IsMap()) bad("", root, "must be a mapping of keys to values");
        uniqueKeys(root, "");
        root = merged(root, "", 0);
        distributedType_ = text("distributed_type", root["distributed_type"],
                                "FSDP, DEEPSPEED, MULTI_GPU, MULTI_CPU or NO");
        if (root["num_processes"])
            processes_ = integer("num_processes", root["num_processes"], 1, 1024);
        if (root["num_machines"])
            machines_ = integer("num_machines", root["num_machines"], 1, 1024);
        for (const auto& kv : root)
            topLevel(kv.first.Scalar(), kv.second);
        // FSDP without fsdp_config.fsdp_sharding_strategy runs Accelerate's default, FULL_SHARD.
        const bool strategySet =
            std::any_of(out_.settings.begin(), out_.settings.end(),
                        [](const auto& setting) { return setting.flag == "--strategy"; });
        if (distributedType_ == "FSDP" && !strategySet) {
            std::erase_if(out_.ignored, [](const auto& i) { return i.key == "distributed_type"; });
            set("distributed_type", "--strategy", "fsdp",
                "FSDP without fsdp_sharding_strategy: Accelerate's default, FULL_SHARD");
        }
        return std::move(out_);
    }

private:
    static std::string shown(const YAML::Node& v) {
        if (!v.IsDefined() || v.IsNull()) return "(nothing)";
        if (!v.IsScalar()) return v.IsMap() ? "(a mapping)" : "(a list)";
        std::string s = v.Scalar();
        if (s.size() > 60) s = s.substr(0, 57) + "...";
        return "'" + s + "'";
    }
    [[noreturn]] void bad(const std::string& key, const YAML::Node& v,
                          const std::string& what) const {
        throwInvalid(source_ + ": " + (key.empty() ? std::string("the file") : key) + " = " +
                     shown(v) + ": " + what);
    }
    void ignore(const std::string& key, const std::string& why) {
        out_.ignored.push_back({key, why});
    }
    void set(const std::string& key, const std::string& flag, const std::string& value,
             const std::string& note = {}) {
        out_.settings.push_back({key, flag, value, note});
    }
    std::string text(const std::string& key, const YAML::Node& v,
                     const std::string& choices) const {
        if (!v) return {};
        if (!v.IsScalar()) bad(key, v, "must be one of " + choices);
        return v.Scalar();
    }
    std::int64_t integer(const std::string& key, const YAML::Node& v, std::int64_t min,
                         std::int64_t max) const {
        if (!v.IsScalar()) bad(key, v, "must be a whole number");
        const std::string& s = v.Scalar();
        if (s.empty() || s.size() > 18 || s.find_first_not_of("0123456789") != std::string::npos)
            bad(key, v, "must be a whole number");
        const std::int64_t n = std::stoll(s);
        if (n < min || n > max)
            bad(key, v, "must be in " + std::to_string(min) + "–" + std::to_string(max));
        return n;
    }
    bool boolean(const std::string& key, const YAML::Node& v) const {
        if (v.IsScalar()) {
            const std::string& s = v.Scalar();
            if (s == "true" || s == "True" || s == "TRUE") return true;
            if (s == "false" || s == "False" || s == "FALSE") return false;
        }
        bad(key, v, "must be true or false");
    }

    // yaml-cpp keeps a repeated key twice (lookups see the first, Accelerate's PyYAML the last):
    // refuse it rather than pick one. A key that is a list or mapping names no setting.
    void uniqueKeys(const YAML::Node& map, const std::string& prefix) const {
        std::set<std::string> seen;
        for (const auto& kv : map) {
            if (!kv.first.IsScalar()) bad(prefix + "a key", kv.first, "keys must be names");
            if (!seen.insert(kv.first.Scalar()).second)
                throwInvalid(source_ + ": " + prefix + kv.first.Scalar() + " is given twice");
        }
    }

    // YAML merge keys (`<<: *anchor`, or `<<: [*a, *b]`), which yaml-cpp 0.7 reads as a key
    // named "<<": the merged mappings' entries join the mapping where it does not set the key
    // itself (YAML 1.1's rule; of a list, the earlier mapping wins). Merged mappings may merge
    // in turn, a few levels deep.
    YAML::Node merged(const YAML::Node& map, const std::string& prefix, int depth) const {
        const YAML::Node from = map["<<"];
        if (!from) return map;
        const std::string key = prefix + "<<";
        if (depth >= kMaxMergeDepth)
            bad(key, from, "merges nest more than " + std::to_string(kMaxMergeDepth) + " deep");
        YAML::Node out(YAML::NodeType::Map);
        std::set<std::string> keys;
        for (const auto& kv : map) {
            if (kv.first.Scalar() == "<<") continue;
            keys.insert(kv.first.Scalar());
            out[kv.first.Scalar()] = kv.second;
        }
        std::vector<YAML::Node> sources;
        if (from.IsMap())
            sources.push_back(from);
        else if (from.IsSequence())
            for (const auto& s : from)
                sources.push_back(s);
        if (sources.empty()) bad(key, from, "must name a mapping (<<: *anchor) or a list of them");
        for (const YAML::Node& s : sources) {
            if (!s.IsMap()) bad(key, s, "must name a mapping (<<: *anchor) or a list of them");
            // Aliases share nodes: a few lines can merge the same mappings exponentially often.
            if (++merges_ > kMaxMerges)
                bad(key, from, "more than " + std::to_string(kMaxMerges) + " merges in one file");
            uniqueKeys(s, prefix);
            for (const auto& kv : merged(s, prefix, depth + 1))
                if (keys.insert(kv.first.Scalar()).second) out[kv.first.Scalar()] = kv.second;
        }
        return out;
    }
    static constexpr int kMaxMergeDepth = 8;
    static constexpr int kMaxMerges = 1000;
    mutable int merges_ = 0;

    void topLevel(const std::string& key, const YAML::Node& v) {
        if (key == "distributed_type") return distributed(v);
        if (key == "num_processes") return set(key, "--ranks", std::to_string(processes_));
        if (key == "mixed_precision") return precision(v);
        if (key == "fsdp_config") {
            if (distributedType_ != "FSDP")
                return ignore(key, "distributed_type is " + distributedType_ + ", not FSDP");
            if (!v.IsMap()) bad(key, v, "must be a mapping");
            uniqueKeys(v, "fsdp_config.");
            for (const auto& kv : merged(v, "fsdp_config.", 0))
                fsdp("fsdp_config." + kv.first.Scalar(), kv.first.Scalar(), kv.second);
            return;
        }
        if (key == "deepspeed_config") {
            if (distributedType_ != "DEEPSPEED")
                return ignore(key, "distributed_type is " + distributedType_ + ", not DEEPSPEED");
            if (!v.IsMap()) bad(key, v, "must be a mapping");
            uniqueKeys(v, "deepspeed_config.");
            return deepspeed(merged(v, "deepspeed_config.", 0));
        }
        if (key == "num_machines" || key == "machine_rank" || key == "main_process_ip" ||
            key == "main_process_port" || key == "same_network" || key == "rdzv_backend" ||
            key == "gpu_ids" || key == "enable_cpu_affinity" || key == "compute_environment")
            return ignore(
                key,
                "launcher setting: mpirun (--hostfile, --mpirun-args) places ShardScope's ranks");
        if (key == "use_cpu") return ignore(key, "the device is --backend cpu|cuda");
        if (key == "main_training_function" || key == "debug")
            return ignore(key, "about the user's training script; ShardScope runs its own step");
        if (key.rfind("tpu_", 0) == 0 || key == "downcast_bf16" || key == "megatron_lm_config" ||
            key == "dynamo_config" || key == "fp8_config" || key == "ipex_config" ||
            key == "mpirun_config")
            return ignore(key, "not a setting ShardScope models");
        ignore(key, "not a setting ShardScope models");
    }

    void distributed(const YAML::Node& v) {
        const std::string& t = distributedType_;
        if (t == "FSDP" || t == "DEEPSPEED")
            return ignore("distributed_type",
                          t + ": the strategy comes from " +
                              (t == "FSDP" ? "fsdp_config" : "deepspeed_config"));
        if (t == "MULTI_GPU" || t == "MULTI_CPU")
            return set("distributed_type", "--strategy", "ddp", t + " is plain data parallelism");
        if (t == "NO") return set("distributed_type", "--strategy", "ddp", "NO: one process");
        bad("distributed_type", v, "ShardScope runs FSDP, DEEPSPEED, MULTI_GPU, MULTI_CPU or NO");
    }

    void precision(const YAML::Node& v) {
        const std::string p = text("mixed_precision", v, "no, bf16 or fp16");
        if (p == "bf16") return set("mixed_precision", "--precision", "bf16");
        if (p == "fp16")
            return set("mixed_precision", "--precision", "bf16",
                       "this build's 16-bit format is bf16: the same bytes per parameter");
        if (p == "no") return set("mixed_precision", "--precision", "fp32");
        if (p == "fp8")
            return ignore("mixed_precision", "fp8 is not modelled; the run keeps its --precision");
        bad("mixed_precision", v, "must be no, bf16, fp16 or fp8");
    }

    void fsdp(const std::string& key, const std::string& k, const YAML::Node& v) {
        if (k == "fsdp_version") {
            const std::int64_t version = integer(key, v, 1, 2);
            return ignore(key, version == 1
                                   ? "FSDP1: flat parameters per unit, as ShardScope's units"
                                   : "FSDP2 shards each parameter; per rank it holds the same "
                                     "bytes as FSDP1's flat "
                                     "units up to padding, which ShardScope counts per unit");
        }
        if (k == "fsdp_sharding_strategy") return sharding(key, v);
        if (k == "fsdp_reshard_after_forward") {
            const bool on = boolean(key, v);
            return set(key, "--reshard-after-forward", on ? "1" : "0");
        }
        if (k == "fsdp_offload_params") {
            if (boolean(key, v)) return set(key, "--offload-params", "host");
            return ignore(key, "false: the parameters stay on the device (nothing to set)");
        }
        if (k == "fsdp_backward_prefetch") {
            const std::string p = text(key, v, "BACKWARD_PRE, BACKWARD_POST or NO_PREFETCH");
            if (p == "BACKWARD_PRE")
                return set(key, "--prefetch", "1",
                           "the next unit is gathered while this one computes");
            if (p == "BACKWARD_POST")
                return set(key, "--prefetch", "1",
                           "one unit ahead; the engine issues it before, not after, this unit's "
                           "gradients");
            if (p == "NO_PREFETCH") return set(key, "--prefetch", "0");
            bad(key, v, "must be BACKWARD_PRE, BACKWARD_POST or NO_PREFETCH");
        }
        if (k == "fsdp_forward_prefetch") {
            boolean(key, v);
            return ignore(key, "the engine's --prefetch covers forward and backward alike "
                               "(fsdp_backward_prefetch sets it)");
        }
        if (k == "fsdp_auto_wrap_policy") {
            const std::string p =
                text(key, v, "TRANSFORMER_BASED_WRAP, SIZE_BASED_WRAP or NO_WRAP");
            if (p == "TRANSFORMER_BASED_WRAP")
                return ignore(
                    key, "matches: one unit per decoder block, ShardScope's unit (nothing to set)");
            if (p == "SIZE_BASED_WRAP" || p == "NO_WRAP")
                return ignore(key, "ShardScope's units are always the embedding, each block and "
                                   "the head (TRANSFORMER_BASED_WRAP)");
            bad(key, v, "must be TRANSFORMER_BASED_WRAP, SIZE_BASED_WRAP or NO_WRAP");
        }
        if (k == "fsdp_activation_checkpointing") {
            if (boolean(key, v)) return set(key, "--checkpointing", "");
            return ignore(key, "false: activations are kept (nothing to set)");
        }
        if (k == "fsdp_state_dict_type")
            return ignore(key, "how checkpoints are saved, not part of a training step");
        if (k == "fsdp_transformer_layer_cls_to_wrap")
            return ignore(key, "names the block class; ShardScope's decoder block is its unit");
        ignore(key, "not a setting ShardScope models");
    }

    // The file's shard group sizes the run unless the command line decides (--strategy,
    // --hybrid-group) or the command takes none (compare without fsdp_hybrid).
    bool groupNeeded() const {
        return ctx_.accepted.count("--hybrid-group") && !ctx_.given.count("--hybrid-group") &&
               !ctx_.given.count("--strategy");
    }

    void sharding(const std::string& key, const YAML::Node& v) {
        const std::string s =
            text(key, v, "FULL_SHARD, SHARD_GRAD_OP, NO_SHARD, HYBRID_SHARD or 1–4");
        if (s == "FULL_SHARD" || s == "1") return set(key, "--strategy", "fsdp");
        if (s == "SHARD_GRAD_OP" || s == "2") return set(key, "--strategy", "fsdp_grad_op");
        if (s == "NO_SHARD" || s == "3")
            return set(key, "--strategy", "ddp", "NO_SHARD is plain data parallelism");
        if (s == "HYBRID_SHARD" || s == "4") {
            set(key, "--strategy", "fsdp_hybrid");
            // Shard inside a machine, replicate across machines.
            const int ranks =
                ctx_.given.count("--ranks") ? ctx_.worldSize : static_cast<int>(processes_);
            const std::int64_t group = ranks / std::max<std::int64_t>(machines_, 1);
            if (group >= 1 && ranks % machines_ == 0)
                set(key, "--hybrid-group", std::to_string(group),
                    "ranks per machine: " + std::to_string(ranks) + " / " +
                        std::to_string(machines_));
            else if (ranks >= 1 && groupNeeded())
                bad(key, v,
                    "shards inside each machine, but the " + std::to_string(ranks) +
                        " ranks do not split evenly over num_machines " +
                        std::to_string(machines_));
            return;
        }
        bad(key, v, "must be FULL_SHARD, SHARD_GRAD_OP, NO_SHARD, HYBRID_SHARD or 1–4");
    }

    void deepspeed(const YAML::Node& block) {
        const YAML::Node file = block["deepspeed_config_file"];
        for (const auto& kv : block) {
            const std::string k = kv.first.Scalar();
            const std::string key = "deepspeed_config." + k;
            if (k == "deepspeed_config_file") continue;
            if (file && file.IsScalar() && !file.Scalar().empty() && file.Scalar() != "none") {
                ignore(key, "deepspeed_config_file decides (Accelerate ignores the inline fields "
                            "beside it)");
                continue;
            }
            const YAML::Node& v = kv.second;
            if (k == "zero_stage") {
                static const char* names[] = {"ddp", "zero1", "zero2", "zero3"};
                set(key, "--strategy", names[integer(key, v, 0, 3)]);
            } else if (k == "offload_optimizer_device" || k == "offload_param_device") {
                const std::string d = text(key, v, "none, cpu or nvme");
                const std::string flag =
                    k == "offload_optimizer_device" ? "--offload-optimizer" : "--offload-params";
                if (d == "cpu")
                    set(key, flag, "host");
                else if (d == "nvme")
                    set(key, flag, "nvme");
                else if (d == "none")
                    ignore(key, "none: the states stay on the device (nothing to set)");
                else
                    bad(key, v, "must be none, cpu or nvme");
            } else if (k == "offload_optimizer_nvme_path" || k == "offload_param_nvme_path") {
                const std::string p = text(key, v, "a folder");
                if (p.empty() || p == "none")
                    ignore(key, "no folder (nothing to set)");
                else
                    set(key, "--nvme-dir", p);
            } else if (k == "gradient_accumulation_steps") {
                set(key, "--grad-accum", std::to_string(integer(key, v, 1, 1 << 20)));
            } else if (k == "gradient_clipping") {
                ignore(key, "the engine clips the global gradient norm at 1, fixed in this build");
            } else if (k == "zero3_init_flag" || k == "zero3_save_16bit_model") {
                ignore(key, "model construction and saving, not part of a training step");
            } else {
                ignore(key, "not a setting ShardScope models");
            }
        }
        if (file) dsFile(file);
    }

    void dsFile(const YAML::Node& file) {
        const std::string key = "deepspeed_config.deepspeed_config_file";
        const std::string path = text(key, file, "a file");
        if (path.empty() || path == "none") return ignore(key, "no file (nothing to read)");
        namespace fs = std::filesystem;
        std::string resolved = path;
        std::error_code ec;
        if (fs::path(path).is_relative() && !fs::exists(path, ec))
            resolved = (fs::path(source_).parent_path() / path).string();
        const std::string dsText = readConfigFile(resolved, key);
        Context ds = ctx_;
        if (!ctx_.given.count("--ranks") && processes_ > 0)
            ds.worldSize = static_cast<int>(processes_);
        Parsed p =
            parseDsConfig(nlohmannParse(dsText, resolved), resolved, ds, "deepspeed_config_file:");
        out_.settings.insert(out_.settings.end(), p.settings.begin(), p.settings.end());
        out_.ignored.insert(out_.ignored.end(), p.ignored.begin(), p.ignored.end());
    }

    static nlohmann::json nlohmannParse(const std::string& text, const std::string& source) {
        try {
            return nlohmann::json::parse(text);
        } catch (const nlohmann::json::parse_error& e) {
            throwInvalid(source + ": not valid JSON at byte " + std::to_string(e.byte));
        } catch (const nlohmann::json::exception&
                     e) { // a number past double's range (1e400) and the like
            throwInvalid(source + ": not valid JSON (" +
                         std::string(e.what()).substr(std::string(e.what()).rfind(']') + 2) + ")");
        }
    }

    std::string source_;
    const Context& ctx_;
    Parsed out_;
    std::string distributedType_;
    std::int64_t processes_ = 0;
    std::int64_t machines_ = 1;
};

} // namespace

namespace {

// The 1-based line of a "---" (or "... " then content) that starts a second document, if any:
// a document marker at the start of a line after the first document's content.
std::optional<int> secondDocumentLine(const std::string& text) {
    bool content = false, ended = false;
    int number = 0;
    std::size_t at = 0;
    while (at <= text.size()) {
        const std::size_t end = std::min(text.find('\n', at), text.size());
        const std::string_view line(text.data() + at, end - at);
        ++number;
        const bool marker = line == "---" || line.starts_with("--- ") || line.starts_with("---\t");
        const bool blank = line.find_first_not_of(" \t\r") == std::string_view::npos ||
                           line.front() == '#' || line.front() == '%';
        if (marker && content) return number;
        if (line == "..." || line.starts_with("... "))
            ended = content;
        else if (!blank && !marker) {
            if (ended) return number;
            content = true;
        }
        at = end + 1;
    }
    return std::nullopt;
}

} // namespace

Parsed parseAccelerateConfig(const std::string& text, const std::string& source,
                             const Context& context) {
    // yaml-cpp passes any bytes through; the keys and values it reads end up in the JSON report,
    // whose writer refuses text that is not UTF-8 (after the run). The same check, up front.
    try {
        (void)nlohmann::json(text).dump();
    } catch (const nlohmann::json::type_error&) {
        throwInvalid(source + ": not valid YAML: the file is not UTF-8 text");
    }
    YAML::Node root;
    // An Accelerate config is one document: a second one would be silently dropped. Found by
    // its marker, not by loading every document (YAML::LoadAll on crafted input takes seconds).
    if (const std::optional<int> line = secondDocumentLine(text))
        throwInvalid(source + ": line " + std::to_string(*line) +
                     " starts a second YAML document; an Accelerate config is one");
    try {
        root = YAML::Load(text);
    } catch (const YAML::Exception& e) {
        throwInvalid(source + ": not valid YAML at line " + std::to_string(e.mark.line + 1) +
                     ", column " + std::to_string(e.mark.column + 1) + " (" + e.msg + ")");
    }
    try {
        return AccelerateReader(source, context).read(root);
    } catch (const YAML::Exception& e) {
        throwInvalid(source + ": " + e.msg);
    }
}

} // namespace shardscope::config_import
