#pragma once
// --ds-config FILE / --accelerate-config FILE for run, compare and estimate: the file's keys
// become flags appended to the command line's (flags given there win), and the listing of
// what was applied and what was ignored is printed and kept for the report.
#include "config_import/hf_model.h"
#include "config_import/import.h"
#include "core/error.h"
#include "report/report.h"

#include <optional>
#include <span>
#include <string>
#include <vector>

namespace shardscope::cli {

struct ConfigImportResult {
    std::string source; // the file as given
    config_import::Imported imported;
    std::optional<int> ranks; // Accelerate's num_processes, when --ranks was not given
};

// Which configuration file, if any: {flag, path} from the command's extras. Refuses both at once.
std::optional<std::pair<std::string, std::string>>
configFileFlag(const std::vector<std::pair<std::string, std::string>>& extras);

// run / compare: reads the file, resolves it against the command line (`argv`: as typed, for
// which flags were given; `ranks`: --ranks or 1) and appends the resulting flags to workerArgs.
ConfigImportResult importForJob(const std::pair<std::string, std::string>& file,
                                const std::string& command, std::span<const std::string> argv,
                                int ranks, std::vector<std::string>& workerArgs);

// estimate: the same for estimate's flags (--strategy, --precision, --micro-batch, --offload-*,
// --hybrid-group, --ranks); the model (--model-config) resolves "auto" sizes.
ConfigImportResult importForEstimate(const std::pair<std::string, std::string>& file,
                                     std::vector<std::string>& argv,
                                     const config_import::HfModel* model);

// run --config-import FILE: the listing of a configuration the GUI imported (the report's
// config_import object; its flags are already on the command line). nullopt without the flag.
std::optional<ConfigImportResult>
importListing(const std::vector<std::pair<std::string, std::string>>& extras);

// Prints "config FILE:" and the listing (stdout).
void printImport(const ConfigImportResult& result);
[[noreturn]] void rethrowNamingKey(const Error& e, const ConfigImportResult& imported);
// Runs `validate` (the job's checks); a refusal of a flag the file set names the file's key too,
// in its one line: "--micro-batch must be …, got 99999 (set by ds.json:
// train_micro_batch_size_per_gpu)". Without a file, `validate` runs as it is.
template <class F>
auto validatedWith(const std::optional<ConfigImportResult>& imported, F validate) {
    try {
        return validate();
    } catch (const Error& e) {
        if (!imported || !e.isUserInput()) throw;
        rethrowNamingKey(e, *imported);
    }
}
// The report's config_import and the run's notes ("ignored: key — why").
void addToReport(const ConfigImportResult& result, report::RunReport& report);

} // namespace shardscope::cli
