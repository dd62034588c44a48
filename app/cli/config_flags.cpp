#include "config_flags.h"

#include "config_import/accelerate.h"
#include "config_import/ds_config.h"
#include "core/error.h"
#include "plan/policy.h"
#include "plan/shape.h"
#include "protocol/protocol.h"
#include "runconfig/fields.h"
#include "runconfig/presets.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace shardscope::cli {

namespace {

// Switches of run and compare (a value never follows them).
const std::set<std::string> kSwitches = {"--checkpointing", "--deterministic", "--no-events",
                                         "--no-sync",       "--shared-device", "--nondeterministic",
                                         "--keep-nvme",     "--save-async",    "--help"};

// Reads and parses --ds-config / --accelerate-config FILE (`file`: the flag and the path).
config_import::Imported importFile(const std::pair<std::string, std::string>& file,
                                   const config_import::Context& ctx) {
    const std::string text = config_import::readConfigFile(file.second, file.first);
    const config_import::Parsed parsed =
        file.first == "--accelerate-config"
            ? config_import::parseAccelerateConfig(text, file.second, ctx)
            : config_import::parseDsConfig(text, file.second, ctx);
    return config_import::finish(parsed, ctx, file.second);
}

} // namespace

std::optional<std::pair<std::string, std::string>>
configFileFlag(const std::vector<std::pair<std::string, std::string>>& extras) {
    std::optional<std::pair<std::string, std::string>> out;
    for (const auto& [flag, value] : extras) {
        if (flag != "--ds-config" && flag != "--accelerate-config") continue;
        if (out)
            throwInvalid(flag + ": give one of --ds-config and --accelerate-config (an Accelerate "
                                "file names its DeepSpeed file itself)");
        if (value.empty()) throwInvalid(flag + " needs a file");
        out = std::pair{flag, value};
    }
    return out;
}

ConfigImportResult importForJob(const std::pair<std::string, std::string>& file,
                                const std::string& command, std::span<const std::string> argv,
                                int ranks, std::vector<std::string>& workerArgs) {
    config_import::Context ctx;
    ctx.command = command;
    ctx.given = config_import::givenFlags({argv.begin(), argv.end()}, kSwitches);
    // --micro-batches is --grad-accum's other name: given, it wins over the file's accumulation.
    if (const auto m = ctx.given.find("--micro-batches"); m != ctx.given.end())
        ctx.given.emplace("--grad-accum", m->second);
    ctx.worldSize = ranks;
    const std::string model = ctx.given.count("--model") ? ctx.given.at("--model") : "tiny";
    if (const runconfig::ModelPreset* preset = runconfig::findPreset(model)) {
        ctx.hiddenSize = preset->shape.dModel;
        const std::vector<plan::UnitParams> units = plan::unitParams(preset->shape);
        if (units.size() > 2) ctx.blockParams = units[1].params;
        ctx.defaultMicroBatch = preset->microBatch;
        ctx.defaultLearningRate = preset->learningRate;
    }
    for (const std::string& flag : runconfig::importableFlags())
        ctx.accepted.insert(flag);
    if (command == "compare") {
        ctx.accepted.erase("--strategy");
        ctx.unsupported["--strategy"] = "compare runs every strategy in --strategies";
        // A shard group is fsdp_hybrid's alone: without it among --strategies the file's group
        // sizes nothing.
        const auto list = ctx.given.find("--strategies");
        bool hybrid = false;
        std::stringstream in(list == ctx.given.end() ? std::string() : list->second);
        for (std::string s; std::getline(in, s, ',');)
            if (const auto strategy = plan::parseStrategy(s))
                hybrid = hybrid || plan::policyFor(*strategy).usesHybridGroup();
        if (!hybrid) {
            ctx.accepted.erase("--hybrid-group");
            ctx.unsupported["--hybrid-group"] =
                "--strategies has no fsdp_hybrid, the one strategy with shard groups";
        }
    }
    ConfigImportResult out;
    out.source = file.second;
    out.imported = importFile(file, ctx);
    // --ranks is the launcher's: it comes back to the caller instead of going to the worker.
    std::vector<std::string>& args = out.imported.args;
    for (auto it = args.begin(); it != args.end();) {
        if (*it == "--ranks" && it + 1 != args.end()) {
            out.ranks = std::stoi(*(it + 1));
            it = args.erase(it, it + 2);
        } else {
            ++it;
        }
    }
    workerArgs.insert(workerArgs.end(), args.begin(), args.end());
    return out;
}

ConfigImportResult importForEstimate(const std::pair<std::string, std::string>& file,
                                     std::vector<std::string>& argv,
                                     const config_import::HfModel* model) {
    config_import::Context ctx;
    ctx.command = "estimate";
    // "auto" values are listed as a run would resolve them: a run without --model is tiny's.
    if (const runconfig::ModelPreset* preset = runconfig::findPreset("tiny"))
        ctx.defaultLearningRate = preset->learningRate;
    ctx.given = config_import::givenFlags(argv, {"--json", "--help"});
    if (const auto it = ctx.given.find("--ranks"); it != ctx.given.end()) {
        try {
            ctx.worldSize = std::max(1, std::stoi(it->second));
        } catch (const std::exception&) {
            ctx.worldSize = 1; // the flag parser names it
        }
    }
    if (model) {
        ctx.hiddenSize = model->hidden;
        if (model->units.size() > 2) ctx.blockParams = model->units[1].params;
    } else if (const auto it = ctx.given.find("--model-shape"); it != ctx.given.end()) {
        // layers,d,heads,vocab,seq: d is what "auto" needs (estimate validates the shape itself).
        const std::string& shape = it->second;
        const auto comma = shape.find(',');
        try {
            if (comma != std::string::npos) ctx.hiddenSize = std::stoll(shape.substr(comma + 1));
        } catch (const std::exception&) {
            ctx.hiddenSize = 0;
        }
    }
    ctx.accepted = {"--strategy",      "--precision",    "--micro-batch", "--offload-optimizer",
                    "--offload-param", "--hybrid-group", "--pp",          "--micro-batches"};
    if (!ctx.given.count("--ranks")) ctx.accepted.insert("--ranks");
    // estimate's names: its --micro-batches are a pipeline's (DeepSpeed's accumulation steps).
    ctx.aliases = {{"--offload-params", "--offload-param"}, {"--grad-accum", "--micro-batches"}};
    if (const auto m = ctx.given.find("--micro-batches"); m != ctx.given.end())
        ctx.given.emplace("--grad-accum", m->second);
    ConfigImportResult out;
    out.source = file.second;
    out.imported = importFile(file, ctx);
    argv.insert(argv.end(), out.imported.args.begin(), out.imported.args.end());
    return out;
}

std::optional<ConfigImportResult>
importListing(const std::vector<std::pair<std::string, std::string>>& extras) {
    std::optional<ConfigImportResult> out;
    for (const auto& [flag, value] : extras) {
        if (flag != "--config-import") continue;
        if (out) throwInvalid("--config-import is given twice");
        if (value.empty()) throwInvalid("--config-import needs a file");
        const report::Parsed<report::ConfigImport> parsed =
            report::parseConfigImport(config_import::readConfigFile(value, flag));
        if (!parsed)
            throw Error(ErrorKind::Format, "--config-import: " + value + ": " + parsed.error);
        out.emplace();
        out->source = parsed.value->source;
        for (const auto& [key, setting] : parsed.value->applied)
            out->imported.applied.push_back({key, setting});
        for (const auto& [key, why] : parsed.value->ignored)
            out->imported.ignored.push_back({key, why});
    }
    return out;
}

void rethrowNamingKey(const Error& e, const ConfigImportResult& imported) {
    const std::string what = e.what();
    for (const config_import::Applied& a : imported.imported.applied) {
        const std::string flag = a.setting.substr(0, a.setting.find(' '));
        if (what.rfind(flag + " ", 0) == 0 || what.rfind(flag + ":", 0) == 0)
            throw Error(e.kind(), what + " (set by " + imported.source + ": " + a.key + ")");
    }
    throw Error(e.kind(), what + " (with the settings of " + imported.source + ")");
}

void printImport(const ConfigImportResult& result) {
    // Key paths and values come from the user's file: control characters are shown escaped.
    std::printf("config %s:\n", protocol::printableText(result.source).c_str());
    for (const std::string& line : config_import::describe(result.imported))
        std::printf("  %s\n", protocol::printableText(line).c_str());
    std::fflush(stdout);
}

namespace {

// A note stays well inside what a report reader takes (report::kMaxText): a key path of a few
// thousand bytes is cut, on a UTF-8 character boundary; config_import keeps it whole.
std::string cappedNote(std::string note) {
    constexpr std::size_t kMax = 1024;
    if (note.size() <= kMax) return note;
    std::size_t cut = kMax;
    while (cut > 0 && (static_cast<unsigned char>(note[cut]) & 0xC0) == 0x80)
        --cut;
    note.resize(cut);
    return note + "…";
}

} // namespace

void addToReport(const ConfigImportResult& result, report::RunReport& report) {
    report::ConfigImport ci;
    ci.source = config_import::utf8Text(result.source);
    for (const auto& a : result.imported.applied)
        ci.applied.emplace_back(a.key, a.setting);
    // A note per ignored key while the notes have room (readers take at most kMaxReportNotes);
    // config_import lists every key regardless.
    const std::size_t room =
        report::kMaxReportNotes - std::min(report.notes.size(), report::kMaxReportNotes);
    const std::size_t total = result.imported.ignored.size();
    for (std::size_t k = 0; k < total; ++k) {
        const auto& i = result.imported.ignored[k];
        ci.ignored.emplace_back(i.key, i.why);
        if (total <= room || k + 1 < room)
            report.notes.push_back(cappedNote("ignored: " + i.key + " — " + i.why));
        else if (k + 1 == room)
            report.notes.push_back("… and " + std::to_string(total - k) +
                                   " more ignored keys (config_import lists them all)");
    }
    report.configImport = std::move(ci);
}

} // namespace shardscope::cli
