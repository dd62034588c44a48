// shardscope-cli: the launcher and reports without a GUI (scripts, CI, clusters).
#include "commands.h"
#include "core/error.h"

#include <cstdio>
#include <exception>
#include <new>
#include <string>
#include <vector>

namespace {

constexpr const char* kUsage =
    "usage: shardscope-cli <command> [flags]\n"
    "commands:\n"
    "  estimate   per-rank memory of DDP / ZeRO-1/2/3 / FSDP from theory (or DeepSpeed's "
    "estimators)\n"
    "  run        run real training steps and report measured vs theory\n"
    "  compare    run several strategies with the same seed, side by side\n"
    "  report     print saved reports (run --json, compare --json)\n"
    "  checkpoint inspect, verify or export a checkpoint (run --save)\n"
    "  export     a recording as Perfetto trace JSON (--perfetto) or the ledger as CSV (--csv)\n"
    "run 'shardscope-cli <command> --help' for its flags\n";

} // namespace

int main(int argc, char** argv) {
    using namespace shardscope;
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
        std::fputs(kUsage, args.empty() ? stderr : stdout);
        return args.empty() ? 2 : 0;
    }
    const std::string command = args[0];
    const std::span<const std::string> rest(args.data() + 1, args.size() - 1);
    try {
        if (command == "estimate") return cli::cmdEstimate(rest);
        if (command == "run") return cli::cmdRun(rest);
        if (command == "compare") return cli::cmdCompare(rest);
        if (command == "report") return cli::cmdReport(rest);
        if (command == "checkpoint") return cli::cmdCheckpoint(rest);
        if (command == "export") return cli::cmdExport(rest);
        std::fprintf(stderr, "shardscope-cli: unknown command '%s' (try --help)\n",
                     command.c_str());
        return 2;
    } catch (const Error& e) {
        std::fprintf(stderr, "shardscope-cli %s: %s\n", command.c_str(), e.what());
        return e.isUserInput() ? 2 : 1;
    } catch (const std::bad_alloc&) {
        std::fprintf(stderr,
                     "shardscope-cli %s: out of host memory: the CLI could not allocate memory for "
                     "the job's "
                     "results (std::bad_alloc)\n",
                     command.c_str());
        return 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "shardscope-cli %s: internal error: %s\n", command.c_str(), e.what());
        return 1;
    }
}
