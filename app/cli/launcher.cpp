#include "launcher.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <thread>

#include "core/error.h"
#include "core/launch.h"
#include "core/stream_writer.h"
#include "job.h"

namespace shardscope::cli {
namespace {

std::string lastLine(const std::string& text) {
    std::size_t end = text.find_last_not_of(" \n\r\t-");
    if (end == std::string::npos) return {};
    std::size_t begin = text.rfind('\n', end);
    return text.substr(begin == std::string::npos ? 0 : begin + 1, end + 1 - (begin == std::string::npos ? 0 : begin + 1));
}

// Workers report their own errors on stderr as "shardscope-worker: rank R, step S: message"
// before aborting the job; that line says more than mpirun's summary.
std::optional<std::string> workerErrorLine(const std::string& text) {
    const std::string tag = "shardscope-worker: ";
    const auto at = text.find(tag);
    if (at == std::string::npos) return std::nullopt;
    const auto end = text.find('\n', at);
    return text.substr(at + tag.size(), end == std::string::npos ? std::string::npos : end - at - tag.size());
}

std::optional<std::string> describeFailure(const JobResult& job, const LaunchOutcome& out,
                                           std::int64_t lastStep, std::chrono::milliseconds stall) {
    if (out.failure) return out.failure; // the worker said it itself
    if (job.interrupted) return std::string("interrupted: the job was stopped");
    if (job.stalled)
        return "no progress for " + std::to_string(stall.count() / 1000) +
               " s after step " + std::to_string(lastStep + 1) + ": a rank is stuck; the job was torn down";
    if (auto line = workerErrorLine(job.stderrText)) return line;
    // lastStep is the last completed step counted from 0; people count from 1, and the rank
    // died in the step after it.
    if (job.rankExit) return launch::describe(*job.rankExit, lastStep + 2);
    if (job.exitCode != 0) {
        std::string line = lastLine(job.stderrText);
        return "mpirun exited with code " + std::to_string(job.exitCode) +
               (line.empty() ? std::string() : ": " + line);
    }
    if (!job.sawEnd || !out.reportJson) return std::string("the job ended without a report");
    return std::nullopt;
}

// Without mpirun nobody names the rank: the worker is rank 0, and its status says how it ended.
JobResult directResult(bool direct, JobResult r) {
    if (direct && r.exitCode != 0 && !r.rankExit && !r.stalled && !r.interrupted) {
        launch::RankExit e;
        e.rank = 0;
        if (r.exitCode > 128) e.signal = r.exitCode - 128;
        else e.exitCode = r.exitCode;
        if (e.signal > 0 || r.exitCode != 2) r.rankExit = e;
    }
    return r;
}

} // namespace

std::string workerPath() {
    std::error_code ec;
    const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (!ec) {
        const auto beside = self.parent_path() / "shardscope-worker";
        if (::access(beside.c_str(), X_OK) == 0) return beside.string();
    }
    if (auto found = launch::findExecutable("shardscope-worker")) return *found;
    throwInvalid("shardscope-worker not found beside " + self.string() + " or on PATH");
}

LaunchOutcome launchJob(const LaunchRequest& req) {
    const auto mpirun = req.direct ? std::optional<std::string>("") : launch::findExecutable(req.mpirun);
    if (!mpirun) throwInvalid("mpirun not found (install OpenMPI: openmpi-bin) — looked for '" +
                              req.mpirun + "'");
    const std::string worker = workerPath();

    Job job;
    launch::MpirunOptions opts;
    opts.mpirun = *mpirun;
    opts.ranks = req.ranks;
    opts.hostfile = req.hostfile;
    opts.extraArgs = req.mpirunArgs;
    opts.runningAsRoot = ::geteuid() == 0;
    opts.localCores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    std::vector<std::string> workerArgs = req.workerArgs;
    workerArgs.insert(workerArgs.end(), {"--stream", job.socketPath()});
    std::vector<std::string> argv{worker};
    if (req.direct) argv.insert(argv.end(), workerArgs.begin(), workerArgs.end());
    else argv = launch::mpirunArgv(opts, worker, workerArgs);

    // The recording is re-encoded from decoded records (StreamWriter: .partial, renamed when
    // finished), so it only ever holds whole records; a job that dies mid-record still leaves a
    // valid file that ends with a Failure record.
    StreamWriter tee;
    if (!req.tracePath.empty()) tee.openRecording(req.tracePath);
    LaunchOutcome out;
    std::int64_t lastStep = -1;
    const JobResult jobResult = job.run(
        argv,
        [&](const protocol::Record& record) {
            tee.write(record);
            if (auto* s = std::get_if<protocol::StepSummary>(&record)) {
                out.steps.push_back(*s);
                lastStep = s->step;
                if (req.onStep) req.onStep(*s);
            } else if (auto* r = std::get_if<protocol::Report>(&record)) {
                out.reportJson = r->json;
            } else if (auto* f = std::get_if<protocol::Failure>(&record)) {
                out.failure = f->rank >= 0 ? "rank " + std::to_string(f->rank) + ": " + f->message
                                           : f->message;
            }
        },
        nullptr, req.stallTimeout);
    JobResult result = directResult(req.direct, jobResult);
    out.userInputError = result.exitCode == 2 && !result.rankExit;
    out.failure = describeFailure(result, out, lastStep, req.stallTimeout);
    if (out.failure && !result.sawEnd) {
        // Close the recording with what the launcher knows, so it stays a valid file.
        tee.write(protocol::Failure{result.rankExit ? result.rankExit->rank : -1, lastStep + 1,
                                    *out.failure});
        tee.write(protocol::End{});
    }
    tee.finish();
    return out;
}

} // namespace shardscope::cli
