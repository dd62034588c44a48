// `shardscope-cli checkpoint inspect|verify|export`: what a checkpoint folder holds, whether its
// files are sound, and its consolidated weights as safetensors (docs/checkpoints.md).
#include "checkpoint/store.h"
#include "commands.h"
#include "core/args.h"
#include "core/error.h"
#include "launch/job.h"

#include <csignal>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace shardscope::cli {
namespace {

// " (2 pipeline stages)" after "zero3 on 4 ranks" for a pipelined run's checkpoint.
std::string stagesText(const checkpoint::Metadata& m) {
    return m.pipeParallel > 1 ? " (" + std::to_string(m.pipeParallel) + " pipeline stages)" : "";
}

constexpr const char* kCheckpointHelp =
    "usage: shardscope-cli checkpoint inspect DIR [--json]\n"
    "       shardscope-cli checkpoint verify DIR[/step-K]\n"
    "       shardscope-cli checkpoint export DIR[/step-K] --out FILE.safetensors [--optimizer]\n"
    "  inspect  every step found (step, strategy, world size, parameters, files with bytes and\n"
    "           checksum state) and the leftovers of interrupted saves\n"
    "  verify   re-hashes every file; exit 0 when sound, else one line naming the first bad file, "
    "exit 2\n"
    "  export   the consolidated fp32 weights under the model's names and shapes (safetensors);\n"
    "           --optimizer adds <name>.exp_avg and <name>.exp_avg_sq\n";

int inspect(const std::string& dir, bool json) {
    const checkpoint::Listing l = checkpoint::listCheckpoints(dir);
    nlohmann::json out = {{"dir", l.root},
                          {"latest", l.latest},
                          {"steps", nlohmann::json::array()},
                          {"temporaries", l.temps}};
    if (!json)
        std::printf("%s: latest %s\n", l.root.c_str(),
                    l.latest.empty() ? "(none)" : l.latest.c_str());
    for (const checkpoint::StepEntry& s : l.steps) {
        nlohmann::json j = {{"name", s.name}};
        if (!s.meta) {
            j["problem"] = s.problem;
            if (!json) std::printf("  %s: unreadable: %s\n", s.name.c_str(), s.problem.c_str());
            out["steps"].push_back(j);
            continue;
        }
        const checkpoint::Metadata& m = *s.meta;
        j.update({{"step", m.step},
                  {"strategy", m.strategy},
                  {"world_size", m.worldSize},
                  {"pipe_parallel", m.pipeParallel},
                  {"param_count", m.paramCount}});
        if (!json)
            std::printf("  %s: step %lld, %s on %d rank%s%s, %llu parameters\n", s.name.c_str(),
                        static_cast<long long>(m.step), m.strategy.c_str(), m.worldSize,
                        m.worldSize == 1 ? "" : "s", stagesText(m).c_str(),
                        static_cast<unsigned long long>(m.paramCount));
        const checkpoint::Opened c{l.root, l.root + "/" + s.name, m};
        nlohmann::json files = nlohmann::json::array();
        for (const checkpoint::FileCheck& f : checkpoint::verifyFiles(c)) {
            files.push_back({{"name", f.name},
                             {"bytes", f.bytes},
                             {"state", std::string(checkpoint::stateName(f.state))},
                             {"problem", f.problem}});
            if (!json)
                std::printf("    %s  %llu bytes  %s\n", f.name.c_str(),
                            static_cast<unsigned long long>(f.bytes),
                            checkpoint::describe(f).c_str());
        }
        j["files"] = files;
        out["steps"].push_back(j);
    }
    if (json)
        std::printf("%s\n", out.dump(2).c_str());
    else
        for (const std::string& t : l.temps)
            std::printf("  leftover of an interrupted save: %s\n", t.c_str());
    return 0;
}

int verify(const std::string& path) {
    const checkpoint::Opened c = checkpoint::openCheckpoint(path);
    std::uint64_t bytes = 0;
    for (const checkpoint::FileCheck& f : checkpoint::verifyFiles(c)) {
        if (f.state != checkpoint::FileCheck::State::Ok)
            throw Error(ErrorKind::Format, "'" + c.dir + "/" + f.name + "': " + f.problem);
        bytes += f.bytes;
    }
    std::printf("%s: sound (step %lld, %s on %d ranks%s, %zu files, %llu bytes)\n", c.dir.c_str(),
                static_cast<long long>(c.meta.step), c.meta.strategy.c_str(), c.meta.worldSize,
                stagesText(c.meta).c_str(), c.meta.files.size(),
                static_cast<unsigned long long>(bytes));
    return 0;
}

} // namespace

int cmdCheckpoint(std::span<const std::string> argv) {
    if (argv.empty()) throwInvalid("checkpoint needs inspect, verify or export (try --help)");
    if (argv[0] == "--help" || argv[0] == "-h") {
        std::fputs(kCheckpointHelp, stdout);
        return 0;
    }
    const std::string what = argv[0];
    if (what != "inspect" && what != "verify" && what != "export")
        throwInvalid("unknown action '" + what + "' (inspect, verify or export)");
    if (argv.size() < 2 || argv[1].starts_with("--")) {
        if (argv.size() >= 2 && argv[1] == "--help") {
            std::fputs(kCheckpointHelp, stdout);
            return 0;
        }
        throwInvalid("checkpoint " + what + " needs a checkpoint folder");
    }
    const std::string dir = argv[1];
    Args args("shardscope-cli checkpoint " + what,
              what == "export" ? std::set<std::string>{"--out"} : std::set<std::string>{},
              what == "inspect"  ? std::set<std::string>{"--json"}
              : what == "export" ? std::set<std::string>{"--optimizer"}
                                 : std::set<std::string>{});
    args.parse(argv.subspan(2));
    if (what == "inspect") return inspect(dir, args.has("--json"));
    if (what == "verify") return verify(dir);
    const std::string out = args.required("--out");
    const checkpoint::Opened c = checkpoint::openCheckpoint(dir);
    // A signal stops the export between units, so the temporary file goes with it.
    const launch::SignalGuard guard;
    const std::uint64_t bytes =
        checkpoint::exportSafetensors(c, out, args.has("--optimizer"), "--out", [] {
            if (const int signal = launch::pendingSignal())
                throw Error(ErrorKind::Comm, std::string("export interrupted by ") +
                                                 (signal == SIGINT    ? "SIGINT"
                                                  : signal == SIGTERM ? "SIGTERM"
                                                                      : "SIGHUP") +
                                                 "; nothing was written");
        });
    std::printf("%s: %zu tensors, %llu bytes (step %lld)\n", out.c_str(),
                c.meta.params.size() * (args.has("--optimizer") ? 3 : 1),
                static_cast<unsigned long long>(bytes), static_cast<long long>(c.meta.step));
    return 0;
}

} // namespace shardscope::cli
