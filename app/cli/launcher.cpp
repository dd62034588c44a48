#include "launcher.h"

#include "core/error.h"
#include "launch/job.h"
#include "launch/mpirun.h"
#include "launch/single_copy.h"
#include "protocol/stream_writer.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <sys/socket.h>
#include <sys/un.h>
#include <thread>
#include <unistd.h>

namespace shardscope::cli {
namespace {

// The GUI's end of the stream (`run --stream PATH`): the records go on as they are decoded
// (whole records, re-encoded as the recording is), so it sees the report the recording holds.
class Forward {
public:
    explicit Forward(const std::string& path) {
        if (path.empty()) return;
        sockaddr_un addr{};
        if (path.size() >= sizeof addr.sun_path) throwInvalid("--stream: path too long: " + path);
        fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        addr.sun_family = AF_UNIX;
        std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
        if (fd_ < 0 || ::connect(fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0)
            throw Error(ErrorKind::Io,
                        "--stream: cannot connect to " + path + ": " + std::strerror(errno));
    }
    ~Forward() {
        if (fd_ >= 0) ::close(fd_);
    }
    Forward(const Forward&) = delete;
    Forward& operator=(const Forward&) = delete;
    void write(const protocol::Record& record) {
        if (fd_ < 0) return;
        std::string bytes;
        if (!headerSent_) protocol::writeHeader(bytes);
        headerSent_ = true;
        protocol::writeRecord(bytes, record);
        write(std::string_view(bytes));
    }
    void write(std::string_view bytes) {
        while (fd_ >= 0 && !bytes.empty()) {
            const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) { // the reader went away: the job goes on for the CLI's own outputs
                ::close(fd_);
                fd_ = -1;
                return;
            }
            bytes.remove_prefix(static_cast<std::size_t>(n));
        }
    }

private:
    int fd_ = -1;
    bool headerSent_ = false;
};

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
    const auto mpirun =
        req.direct ? std::optional<std::string>("") : launch::findExecutable(req.mpirun);
    if (!mpirun)
        throwInvalid("mpirun not found (install OpenMPI: openmpi-bin) — looked for '" + req.mpirun +
                     "'");
    std::string worker = req.worker;
    if (worker.empty())
        worker = workerPath();
    else if (!launch::findExecutable(worker))
        throwInvalid("--worker: " + worker + " is not an executable");

    // Installed before the job's folder exists: from here on a signal tears the job down and
    // the destructors remove the folder.
    const launch::SignalGuard guard;
    Forward forward(req.forwardPath);
    launch::Job job;
    launch::MpirunOptions opts;
    opts.mpirun = *mpirun;
    opts.ranks = req.ranks;
    opts.hostfile = req.hostfile;
    opts.extraArgs = req.mpirunArgs;
    opts.runningAsRoot = ::geteuid() == 0;
    opts.localCores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    opts.singleCopy = req.hostfile.empty() && launch::crossMemoryAttachWorks();
    std::vector<std::string> workerArgs = req.workerArgs;
    workerArgs.insert(workerArgs.end(), {"--stream", job.socketPath()});
    std::vector<std::string> argv{worker};
    if (req.direct)
        argv.insert(argv.end(), workerArgs.begin(), workerArgs.end());
    else
        argv = launch::mpirunArgv(opts, worker, workerArgs);
    // A job on this machine opens nothing another machine can reach (mpirun's listener binds
    // every interface; its own namespace has only loopback).
    job.setLoopbackOnly(req.direct || launch::singleHost(opts));

    // The recording is re-encoded from decoded records (StreamWriter: .partial, renamed when
    // finished), so it only ever holds whole records; a job that dies mid-record still leaves a
    // valid file that ends with a Failure record.
    StreamWriter tee;
    if (!req.tracePath.empty()) tee.openRecording(req.tracePath);
    LaunchOutcome out;
    bool sawEnd = false;
    const auto take = [&](const protocol::Record& record) {
        tee.write(record);
        forward.write(record);
        if (auto* s = std::get_if<protocol::StepSummary>(&record)) {
            out.steps.push_back(*s);
            if (req.onStep) req.onStep(*s);
        } else if (auto* r = std::get_if<protocol::Report>(&record)) {
            out.reportJson = r->json;
        } else if (std::holds_alternative<protocol::End>(record)) {
            sawEnd = true;
        }
    };
    out.ending = job.run(
        argv,
        [&](const protocol::Record& record) {
            const auto* report = std::get_if<protocol::Report>(&record);
            if (!report || !req.amendReport) return take(record);
            protocol::Report amended = *report;
            amended.json = req.amendReport(report->json);
            take(protocol::Record(std::move(amended)));
        },
        nullptr, req.stallTimeout, req.direct);
    if (out.ending.kind != launch::EndingKind::Completed && !sawEnd && tee.active()) {
        // Close the recording with what the launcher knows, so it stays a valid file.
        tee.write(protocol::Failure{out.ending.rank.value_or(-1),
                                    out.ending.step ? *out.ending.step - 1 : -1,
                                    launch::describe(out.ending)});
        tee.write(protocol::End{});
    }
    if (const std::string wentTo = tee.finish(); !wentTo.empty() && wentTo != req.tracePath)
        out.recordingKeptAs = wentTo;
    return out;
}

} // namespace shardscope::cli
