// estimate with a model shape: the predicted peak is the dry run of the real step, which only
// the worker links (predict/ runs the engine). One `shardscope-worker --predict REQUEST` for all
// rows, beside the CLI as for `run`.
#include "core/error.h"
#include "estimate_common.h"
#include "launcher.h" // workerPath
#include "report/prediction.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <poll.h>
#include <spawn.h>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace shardscope::cli {

namespace {

struct Pipe {
    int fd[2] = {-1, -1};
    Pipe() {
        if (::pipe(fd) != 0)
            throw Error(ErrorKind::Io, std::string("pipe: ") + std::strerror(errno));
    }
    ~Pipe() {
        for (int f : fd)
            if (f >= 0) ::close(f);
    }
    void closeEnd(int i) {
        if (fd[i] >= 0) ::close(fd[i]);
        fd[i] = -1;
    }
};

struct Output {
    int status = 0;
    std::string out, err;
};

// Runs argv with stdout and stderr captured; both are drained together so neither pipe fills.
Output capture(const std::vector<std::string>& argv) {
    Pipe out, err;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out.fd[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, err.fd[1], STDERR_FILENO);
    posix_spawn_file_actions_addclose(&actions, out.fd[0]);
    posix_spawn_file_actions_addclose(&actions, err.fd[0]);
    std::vector<char*> args;
    for (const std::string& a : argv)
        args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    pid_t pid = -1;
    const int rc = ::posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) throwInvalid("cannot start " + argv[0] + ": " + std::strerror(rc));
    out.closeEnd(1);
    err.closeEnd(1);

    Output result;
    pollfd fds[2] = {{out.fd[0], POLLIN, 0}, {err.fd[0], POLLIN, 0}};
    std::string* sinks[2] = {&result.out, &result.err};
    int open = 2;
    while (open > 0) {
        if (::poll(fds, 2, -1) < 0) {
            if (errno == EINTR) continue;
            break;
        }
        for (int i = 0; i < 2; ++i) {
            if (fds[i].fd < 0 || fds[i].revents == 0) continue;
            char buf[65536];
            const ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
            if (n > 0) {
                sinks[i]->append(buf, static_cast<std::size_t>(n));
            } else if (n == 0 || errno != EINTR) {
                fds[i].fd = -1;
                --open;
            }
        }
    }
    while (::waitpid(pid, &result.status, 0) < 0 && errno == EINTR) {
    }
    return result;
}

// The worker's own line, without its "shardscope-worker: " prefix and trailing newline.
std::string firstLine(std::string text) {
    const std::string prefix = "shardscope-worker: ";
    if (text.rfind(prefix, 0) == 0) text.erase(0, prefix.size());
    const auto end = text.find('\n');
    return end == std::string::npos ? text : text.substr(0, end);
}

} // namespace

std::vector<theory::PeakPrediction> dryRunPeaks(const std::vector<theory::Scenario>& scenarios) {
    const std::string worker = workerPath();
    const Output r = capture({worker, "--predict", report::predictRequestJson(scenarios).dump()});
    if (WIFSIGNALED(r.status))
        throw Error(ErrorKind::Internal, "the dry run (" + worker + " --predict) ended by signal " +
                                             std::to_string(WTERMSIG(r.status)));
    const int code = WIFEXITED(r.status) ? WEXITSTATUS(r.status) : 1;
    if (code != 0) {
        const std::string why = "the dry run (" + worker + " --predict): " + firstLine(r.err);
        if (code == 2) throwInvalid(why);
        throw Error(ErrorKind::Internal, why);
    }
    report::Parsed<std::vector<theory::PeakPrediction>> answer = report::parsePredictAnswer(r.out);
    if (!answer)
        throw Error(ErrorKind::Format,
                    "the dry run (" + worker + " --predict) answered: " + answer.error);
    if (answer.value->size() != scenarios.size())
        throw Error(ErrorKind::Format, "the dry run (" + worker + " --predict) answered " +
                                           std::to_string(answer.value->size()) +
                                           " predictions for " + std::to_string(scenarios.size()) +
                                           " scenarios");
    return std::move(*answer.value);
}

} // namespace shardscope::cli
