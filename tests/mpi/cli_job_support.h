#pragma once
// Running shardscope-cli jobs as a user does, for the tests of whole jobs (cli_jobs_test,
// pipeline_jobs_test): start the CLI (or the worker) with its output in files, wait for its
// steps, find the job's processes by a marker on their command line (the --seed), and check
// that none is left behind.
#include <chrono>
#include <filesystem>
#include <string>
#include <sys/types.h>
#include <vector>

namespace shardscope::testing {

namespace fs = std::filesystem;
extern const std::string kCli; // build/bin/shardscope-cli

std::string slurp(const fs::path& p);
fs::path scratch(const std::string& name); // a per-process file name under the temp folder

struct Proc {
    pid_t pid = -1;
    fs::path out, err;
};
// `program`: the CLI unless another binary is named (the worker run directly).
Proc start(const std::vector<std::string>& args, const std::string& tag,
           const std::string& program = kCli);
int finish(const Proc& p); // its exit code, or 128 + the signal that ended it

struct Running {
    pid_t pid;
    std::string cmd; // the command line, arguments separated by spaces
};
// Processes whose argv[0] ends with one of `programs` and whose command line holds `marker`.
std::vector<Running> processes(const std::string& marker, const std::vector<std::string>& programs);
// Worker processes (argv[0] = …/shardscope-worker) whose command line holds `marker`.
std::vector<pid_t> workers(const std::string& marker);
// Waits until `p` has printed progress for `steps` steps.
void waitForSteps(const Proc& p, int steps);
int countOf(const std::string& text, const std::string& what);
int rankOf(pid_t pid); // the world rank of a worker under mpirun (OMPI_COMM_WORLD_RANK)
pid_t workerOfRank(const std::string& marker, int rank);
// Fails for every process of the job still running `limit` after `t0` (and kills it).
void expectNothingOfTheJobWithin(const std::string& marker,
                                 std::chrono::steady_clock::time_point t0,
                                 std::chrono::seconds limit);

} // namespace shardscope::testing
