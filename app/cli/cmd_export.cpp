// `shardscope-cli export REC.sstrace --perfetto OUT.json | --csv OUT.csv`: a recording as files
// other tools read (backend/trace_export): Chrome trace-event JSON for Perfetto UI and
// chrome://tracing, and the ledger over time as CSV for spreadsheets and pandas.
#include "args.h"
#include "commands.h"
#include "core/error.h"
#include "core/user_files.h"
#include "launch/job.h"
#include "run_common.h"
#include "trace_export/exports.h"

#include <csignal>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace shardscope::cli {
namespace {

constexpr const char* kExportHelp =
    "usage: shardscope-cli export REC.sstrace [--perfetto OUT.json] [--csv OUT.csv]\n"
    "  --perfetto FILE   Chrome trace-event JSON (Perfetto UI, chrome://tracing): a process per\n"
    "                    rank, compute / communication / gathered-parameter tracks, slices with\n"
    "                    unit, phase, bytes, algbw/busbw; a counter per ledger category; flow\n"
    "                    arrows joining the ranks of each collective\n"
    "  --csv FILE        the ledger over time: time_ns,rank,category,tier,unit,live_bytes\n"
    "Times are the replay clock: each step's real timestamps, steps back to back.\n"
    "A recording that does not read: one line, exit code 2, no output file.\n";

int exportTo(const std::string& recording, const std::optional<std::string>& perfetto,
             const std::optional<std::string>& csv, const std::function<void()>& poll);

} // namespace

int cmdExport(std::span<const std::string> argv) {
    std::vector<std::string> flags;
    std::string recording;
    for (const std::string& a : argv) {
        if (a == "--help" || a == "-h") {
            std::fputs(kExportHelp, stdout);
            return 0;
        }
    }
    // The recording is the one argument that is not a flag or a flag's value.
    for (std::size_t i = 0; i < argv.size(); ++i) {
        const std::string& a = argv[i];
        if (a.rfind("--", 0) == 0) {
            flags.push_back(a);
            if (a.find('=') == std::string::npos && i + 1 < argv.size()) flags.push_back(argv[++i]);
            continue;
        }
        if (!recording.empty())
            throwInvalid("export takes one recording, got '" + recording + "' and '" + a + "'");
        recording = a;
    }
    if (recording.empty())
        throwInvalid(
            "export needs a recording: shardscope-cli export REC.sstrace --perfetto OUT.json");
    Args args("export", {"--perfetto", "--csv"}, {});
    args.parse(flags);
    const std::optional<std::string> perfetto = args.value("--perfetto"), csv = args.value("--csv");
    if (!perfetto && !csv) throwInvalid("export needs --perfetto FILE and/or --csv FILE");
    if (perfetto) checkOutputPath(*perfetto, "--perfetto");
    if (csv) checkOutputPath(*csv, "--csv");
    checkDistinctFiles({{"the recording", recording},
                        {"--perfetto", perfetto.value_or("")},
                        {"--csv", csv.value_or("")}});

    // SIGINT / SIGTERM / SIGHUP abandon the file being written: the writer's OutputFile removes
    // its temporary file as the exception passes (exit 1, as an interrupted run).
    const launch::SignalGuard guard;
    struct Interrupted {
        int signal;
    };
    const auto poll = [] {
        if (const int signal = launch::pendingSignal()) throw Interrupted{signal};
    };
    try {
        return exportTo(recording, perfetto, csv, poll);
    } catch (const Interrupted& i) {
        std::fprintf(stderr,
                     "shardscope-cli export: interrupted by %s: no file is left half-written\n",
                     i.signal == SIGINT    ? "SIGINT"
                     : i.signal == SIGTERM ? "SIGTERM"
                                           : "SIGHUP");
        return 1;
    }
}

namespace {

int exportTo(const std::string& recording, const std::optional<std::string>& perfetto,
             const std::optional<std::string>& csv, const std::function<void()>& poll) {
    const trace_export::LoadedRecording rec = trace_export::loadRecording(recording, "export");
    poll();
    if (!rec.ended)
        std::printf("note: %s ends before the run finished; exporting its %lld step(s)\n",
                    recording.c_str(), static_cast<long long>(rec.steps));
    if (perfetto) {
        trace_export::ExportCounts n;
        const std::string went =
            trace_export::writePerfetto(rec.model, *perfetto, "--perfetto", n, poll);
        if (noteWhereWritten(*perfetto, went))
            std::printf("perfetto: %llu slices, %llu counter samples, %llu flows written to %s\n",
                        static_cast<unsigned long long>(n.slices),
                        static_cast<unsigned long long>(n.counters),
                        static_cast<unsigned long long>(n.flows), perfetto->c_str());
    }
    if (csv) {
        trace_export::ExportCounts n;
        const std::string went = trace_export::writeLedgerCsv(rec.model, *csv, "--csv", n, poll);
        if (noteWhereWritten(*csv, went))
            std::printf("csv: %llu rows written to %s\n", static_cast<unsigned long long>(n.rows),
                        csv->c_str());
    }
    return conflicts() == 0 ? 0 : 1;
}

} // namespace

} // namespace shardscope::cli
