#include "launch/job.h"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "core/error.h"
#include "launch/process_tree.h"

extern char** environ;

namespace shardscope::launch {
namespace {

volatile std::sig_atomic_t gSignal = 0;
void onSignal(int signal) {
    if (gSignal == 0) gSignal = signal;
}
constexpr int kGuarded[] = {SIGINT, SIGTERM, SIGHUP};
struct sigaction gPrevious[std::size(kGuarded)];

[[noreturn]] void sysFail(const std::string& what) {
    throw Error(ErrorKind::Io, what + ": " + std::strerror(errno));
}

// Reads what is available; returns false at EOF or error.
bool drain(int fd, std::string& into) {
    char buf[65536];
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
        into.append(buf, static_cast<std::size_t>(n));
        return true;
    }
    return n < 0 && (errno == EAGAIN || errno == EINTR);
}

} // namespace

SignalGuard::SignalGuard() {
    gSignal = 0;
    struct sigaction action {};
    action.sa_handler = onSignal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = 0; // no SA_RESTART: poll() wakes up at once
    for (std::size_t i = 0; i < std::size(kGuarded); ++i) ::sigaction(kGuarded[i], &action, &gPrevious[i]);
}

SignalGuard::~SignalGuard() {
    for (std::size_t i = 0; i < std::size(kGuarded); ++i) ::sigaction(kGuarded[i], &gPrevious[i], nullptr);
}

int pendingSignal() { return gSignal; }

Job::Job() {
    char tmpl[] = "/tmp/shardscope-XXXXXX";
    if (!::mkdtemp(tmpl)) sysFail("cannot create a private folder for the event stream");
    dir_ = tmpl; // mkdtemp makes it 0700: only this user can reach the socket
    socketPath_ = dir_ + "/stream.sock";
    listenFd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (listenFd_ < 0) sysFail("socket()");
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::memcpy(addr.sun_path, socketPath_.c_str(), socketPath_.size() + 1);
    if (::bind(listenFd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0 ||
        ::listen(listenFd_, 4) != 0)
        sysFail("cannot listen on " + socketPath_);
}

Job::~Job() {
    teardown();
    if (listenFd_ >= 0) ::close(listenFd_);
    ::unlink(socketPath_.c_str());
    ::rmdir(dir_.c_str());
}

void Job::teardown() {
    if (pid_ <= 0) return;
    // The whole process group (mpirun and every rank it started), plus any descendant that
    // left the group: the tree is collected before mpirun can exit and orphan it.
    const std::vector<ProcessId> tree = descendantPids(pid_);
    ::kill(-pid_, SIGTERM);
    const auto deadline = std::chrono::steady_clock::now() + kGrace;
    while (std::chrono::steady_clock::now() < deadline) {
        if (::waitpid(pid_, nullptr, WNOHANG) == pid_) {
            pid_ = -1;
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (pid_ > 0) {
        ::kill(-pid_, SIGKILL);
        ::waitpid(pid_, nullptr, 0);
        pid_ = -1;
    }
    signalAll(tree, SIGKILL); // ranks mpirun did not take down
}

JobEnding Job::run(const std::vector<std::string>& argv,
                   const std::function<void(const protocol::Record&)>& onRecord,
                   const std::function<void(std::string_view)>& onBytes,
                   std::chrono::milliseconds stallTimeout, bool direct) {
    JobEvidence evidence;
    evidence.direct = direct;
    evidence.stallTimeout = stallTimeout;
    int errPipe[2];
    if (::pipe2(errPipe, O_CLOEXEC) != 0) sysFail("pipe()");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, errPipe[1], STDERR_FILENO);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    // Its own process group, and default signal dispositions (not this process's guard).
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
    posix_spawnattr_setpgroup(&attr, 0);
    sigset_t all, none;
    sigfillset(&all);
    sigemptyset(&none);
    posix_spawnattr_setsigdefault(&attr, &all);
    posix_spawnattr_setsigmask(&attr, &none);
    std::vector<char*> cargv;
    for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
    cargv.push_back(nullptr);
    const int rc = ::posix_spawnp(&pid_, cargv[0], &actions, &attr, cargv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    ::close(errPipe[1]);
    if (rc != 0) {
        ::close(errPipe[0]);
        pid_ = -1;
        evidence.startFailed = true;
        evidence.stderrText = "cannot start " + argv[0] + ": " + std::strerror(rc);
        return classify(evidence);
    }

    protocol::StreamDecoder decoder;
    int conn = -1;
    int errFd = errPipe[0];
    ::fcntl(errFd, F_SETFL, O_NONBLOCK);
    auto lastBytes = std::chrono::steady_clock::now();
    int status = 0;
    auto exitedAt = std::chrono::steady_clock::time_point{};

    while (true) {
        std::vector<pollfd> fds;
        fds.push_back({conn >= 0 ? conn : listenFd_, POLLIN, 0});
        if (errFd >= 0) fds.push_back({errFd, POLLIN, 0});
        ::poll(fds.data(), fds.size(), 100);

        if (conn == -1) {
            conn = ::accept4(listenFd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
        } else if (conn >= 0) {
            std::string chunk;
            if (!drain(conn, chunk)) {
                ::close(conn);
                conn = -2; // stream closed; do not accept another
            }
            if (!chunk.empty()) {
                lastBytes = std::chrono::steady_clock::now();
                if (onBytes) onBytes(chunk);
                try {
                    decoder.feed(chunk);
                    while (auto record = decoder.next()) {
                        if (std::holds_alternative<protocol::End>(*record)) evidence.sawEnd = true;
                        else if (std::holds_alternative<protocol::Report>(*record)) evidence.sawReport = true;
                        else if (auto* s = std::get_if<protocol::StepSummary>(&*record))
                            evidence.lastCompleteStep = std::max(evidence.lastCompleteStep, s->step);
                        else if (auto* f = std::get_if<protocol::Failure>(&*record); f && !evidence.failureRank) {
                            evidence.failureRank = f->rank;
                            evidence.failureStep = f->step;
                            evidence.failureMessage = protocol::printableText(f->message); // shown, never interpreted
                        }
                        if (onRecord) onRecord(*record);
                    }
                } catch (const Error& e) {
                    evidence.streamError = e.what();
                    break; // a stream we cannot read is useless to keep running
                }
            }
        }
        if (errFd >= 0 && !drain(errFd, evidence.stderrText)) {
            ::close(errFd);
            errFd = -1;
        }
        if (!evidence.exited && ::waitpid(pid_, &status, WNOHANG) == pid_) {
            evidence.exited = true;
            pid_ = -1;
            exitedAt = std::chrono::steady_clock::now();
        }
        const auto now = std::chrono::steady_clock::now();
        // After exit, give the socket and stderr a moment to drain, then stop.
        if (evidence.exited && ((conn < 0 && errFd < 0) || now - exitedAt > kDrain)) break;
        if (evidence.exited) continue;
        if (const int signal = pendingSignal()) {
            evidence.interruptSignal = signal;
            break;
        }
        if (stopRequested_) {
            evidence.stopRequested = true;
            break;
        }
        if (now - lastBytes > stallTimeout) {
            evidence.stalled = true;
            break;
        }
    }
    if (conn >= 0) ::close(conn);
    if (errFd >= 0) {
        drain(errFd, evidence.stderrText);
        ::close(errFd);
    }
    if (evidence.exited) {
        evidence.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    } else {
        teardown();
        evidence.exitCode = 1;
    }
    return classify(evidence);
}

} // namespace shardscope::launch
