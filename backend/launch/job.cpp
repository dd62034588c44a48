#include "launch/job.h"

#include "core/error.h"
#include "launch/mpirun.h"
#include "launch/process_tree.h"
#include "launch/progress.h"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <map>
#include <net/if.h>
#include <nlohmann/json.hpp>
#include <optional>
#include <poll.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char** environ;

namespace shardscope::launch {
namespace {

volatile std::sig_atomic_t gSignal = 0;
int gDepth = 0; // nested guards: only the outermost installs and restores the handlers
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

// The ranks do the work; the supervisor only decodes, records and forwards their stream. On a
// machine without a spare core its CPU time comes out of theirs (tracing cost 5-10 % of wall
// time through the CLI and under mpirun), so once a job runs it gives way: nice +5, once per
// process, after the fork so that the ranks keep the caller's priority.
void yieldToTheRanks() {
    static bool done = false;
    if (done) return;
    done = true;
    errno = 0;
    const int current = ::getpriority(PRIO_PROCESS, 0);
    if (errno == 0) ::setpriority(PRIO_PROCESS, 0, std::min(current + 5, 19));
}

// What the child does between fork and exec: only async-signal-safe calls, on data prepared
// before the fork.
struct ChildSetup {
    pid_t parent = -1;
    int errFd = -1;  // becomes stderr
    int execFd = -1; // close-on-exec: an errno written here means exec (or isolation) failed
    bool isolate = false;
    bool userNamespace = false; // not root: a user namespace grants the network namespace
    std::string uidMap, gidMap;
};

bool writeFile(const char* path, const std::string& text) {
    const int fd = ::open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) return false;
    const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    ::close(fd);
    return ok;
}

// A new network namespace whose loopback is up. Returns 0 or the errno of what failed.
int isolateNetwork(const ChildSetup& c) {
    if (c.userNamespace) {
        if (::unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0) return errno;
        // The same uid and gid inside: files, shared memory and mpirun's root check see no change.
        if (!writeFile("/proc/self/setgroups", "deny") ||
            !writeFile("/proc/self/uid_map", c.uidMap) ||
            !writeFile("/proc/self/gid_map", c.gidMap))
            return errno ? errno : EPERM;
    } else if (::unshare(CLONE_NEWNET) != 0) {
        return errno;
    }
    const int sock = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (sock < 0) return errno;
    ifreq req{};
    std::memcpy(req.ifr_name, "lo", 3);
    int rc = ::ioctl(sock, SIOCGIFFLAGS, &req);
    if (rc == 0) {
        req.ifr_flags = static_cast<short>(req.ifr_flags | IFF_UP);
        rc = ::ioctl(sock, SIOCSIFFLAGS, &req);
    }
    const int err = rc == 0 ? 0 : errno;
    ::close(sock);
    return err;
}

[[noreturn]] void childFail(int fd, int err) {
    [[maybe_unused]] const ssize_t n = ::write(fd, &err, sizeof err);
    ::_exit(127);
}

[[noreturn]] void runChild(const ChildSetup& c, const char* path, char* const argv[],
                           char* const envp[]) {
    ::setpgid(0, 0); // its own process group: the whole job is signalled at once
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    for (int s = 1; s < NSIG; ++s)
        ::sigaction(s, &dfl, nullptr); // SIGKILL/SIGSTOP simply fail
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != c.parent) ::_exit(127); // the supervisor died before the line above
    if (c.isolate) {
        if (const int err = isolateNetwork(c)) childFail(c.execFd, err);
    }
    ::dup2(c.errFd, STDERR_FILENO);
    const int devnull = ::open("/dev/null", O_RDWR);
    if (devnull >= 0) {
        ::dup2(devnull, STDIN_FILENO);
        ::dup2(devnull, STDOUT_FILENO);
        if (devnull > STDERR_FILENO) ::close(devnull);
    }
    ::execve(path, argv, envp);
    childFail(c.execFd, errno);
}

} // namespace

bool Job::loopbackIsolationAvailable() {
    // Tried once in a throw-away child: a namespace that cannot bring loopback up would leave
    // the job with no network at all, so it is used only where the whole setup works.
    static const bool available = [] {
        ChildSetup c;
        c.userNamespace = ::geteuid() != 0;
        c.uidMap = std::to_string(::geteuid()) + " " + std::to_string(::geteuid()) + " 1";
        c.gidMap = std::to_string(::getegid()) + " " + std::to_string(::getegid()) + " 1";
        const pid_t pid = ::fork();
        if (pid < 0) return false;
        if (pid == 0) ::_exit(isolateNetwork(c) == 0 ? 0 : 1);
        int status = 0;
        while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        return WIFEXITED(status) && WEXITSTATUS(status) == 0;
    }();
    return available;
}

SignalGuard::SignalGuard() {
    if (gDepth++ > 0) return; // an outer guard is installed and keeps what it recorded
    gSignal = 0;
    struct sigaction action {};
    action.sa_handler = onSignal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = 0; // no SA_RESTART: poll() wakes up at once
    for (std::size_t i = 0; i < std::size(kGuarded); ++i)
        ::sigaction(kGuarded[i], &action, &gPrevious[i]);
}

SignalGuard::~SignalGuard() {
    if (--gDepth > 0) return;
    for (std::size_t i = 0; i < std::size(kGuarded); ++i)
        ::sigaction(kGuarded[i], &gPrevious[i], nullptr);
    gSignal = 0; // a signal counts only while a guard is installed
}

int pendingSignal() {
    return gSignal;
}

std::string makePrivateFolder(const std::string& prefix) {
    const std::string base = "/tmp/" + prefix + "-";
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator("/tmp", ec)) {
        // <prefix>-<pid>-XXXXXX of this user whose process is gone (killed with SIGKILL)
        const std::string path = entry.path().string();
        if (!path.starts_with(base)) continue;
        const std::string rest = path.substr(base.size());
        const auto dash = rest.find('-');
        if (dash == std::string::npos || dash == 0 || dash > 9 || rest.size() != dash + 7 ||
            rest.find_first_not_of("0123456789") != dash)
            continue;
        struct stat st {};
        if (::lstat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid())
            continue;
        const auto pid = static_cast<pid_t>(std::stol(rest.substr(0, dash)));
        if (pid == ::getpid() || ::kill(pid, 0) == 0 || errno != ESRCH) continue;
        std::filesystem::remove_all(path, ec);
    }
    std::string tmpl = base + std::to_string(::getpid()) + "-XXXXXX";
    if (!::mkdtemp(tmpl.data())) sysFail("cannot create a private folder in /tmp");
    return tmpl; // mkdtemp makes it 0700: only this user can reach what is inside
}

Job::Job() {
    dir_ = makePrivateFolder("shardscope");
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
    killStragglers();
    if (listenFd_ >= 0) ::close(listenFd_);
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec); // the socket and the ranks' progress records
}

void Job::collectTree() {
    if (pid_ <= 0) return;
    for (const ProcessId& p : descendantPids(pid_)) {
        const bool known = std::any_of(tree_.begin(), tree_.end(), [&](const ProcessId& q) {
            return q.pid == p.pid && q.startTime == p.startTime;
        });
        if (!known) tree_.push_back(p);
    }
}

void Job::killStragglers() {
    if (startTime_ == 0) return;
    // Ranks whose mpirun died were re-parented to this process (a subreaper): they are its
    // descendants that started with or after the job.
    for (const ProcessId& p : descendantPids(::getpid())) {
        if (p.startTime < startTime_) continue;
        const bool known = std::any_of(tree_.begin(), tree_.end(), [&](const ProcessId& q) {
            return q.pid == p.pid && q.startTime == p.startTime;
        });
        if (!known) tree_.push_back(p);
    }
    signalAll(tree_, SIGKILL);
    const auto deadline = std::chrono::steady_clock::now() + kGrace;
    for (const ProcessId& p : tree_) {
        // Reap those that are this process's children now; others belong to their parents.
        while (::waitpid(p.pid, nullptr, WNOHANG) == 0 &&
               std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    tree_.clear();
    startTime_ = 0;
}

void Job::freeze() {
    collectTree();
    ::kill(-pid_, SIGSTOP);
    signalAll(tree_, SIGSTOP);
    // kill() returns before the processes stop: what they write until then still reaches the
    // stream, so the drain waits for them (briefly).
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(200);
    auto frozen = [&](pid_t p) { return isStopped(p) || hasEnded(p); };
    while (std::chrono::steady_clock::now() < deadline &&
           !(frozen(pid_) && std::all_of(tree_.begin(), tree_.end(),
                                         [&](const ProcessId& p) { return frozen(p.pid); })))
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
}

void Job::teardown() {
    if (pid_ <= 0) return;
    // The whole process group (mpirun and every rank it started), plus any descendant that
    // left the group: the tree is collected before mpirun can exit and orphan it.
    collectTree();
    // The ranks end first, each acting on SIGTERM as it is continued (a handler — the NVMe
    // tier's file removal — runs; no step does), while mpirun, frozen, cannot restart anything.
    std::vector<ProcessId> ranks;
    for (const ProcessId& p : tree_)
        if (p.pid != pid_) ranks.push_back(p);
    signalAll(ranks, SIGTERM);
    signalAll(ranks, SIGCONT);
    const auto ranksDeadline = std::chrono::steady_clock::now() + kRanksGrace;
    while (std::chrono::steady_clock::now() < ranksDeadline &&
           !std::all_of(ranks.begin(), ranks.end(),
                        [](const ProcessId& p) { return hasEnded(p.pid); }))
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    signalAll(ranks, SIGKILL); // a rank that did not act on SIGTERM
    ::kill(-pid_, SIGTERM);
    ::kill(-pid_, SIGCONT); // a stopped process acts on SIGTERM only once continued
    signalAll(tree_, SIGCONT);
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
    signalAll(tree_, SIGKILL); // ranks mpirun did not take down
}

JobEnding Job::run(const std::vector<std::string>& argv,
                   const std::function<void(const protocol::Record&)>& onRecord,
                   const std::function<void(std::string_view)>& onBytes,
                   std::chrono::milliseconds stallTimeout, bool direct) {
    JobEvidence evidence;
    killStragglers(); // a Job runs one job at a time; anything left of the last one goes now
    evidence.direct = direct;
    evidence.stallTimeout = stallTimeout;
    // Everything the child needs is prepared here: after fork it may only make system calls.
    const std::optional<std::string> path = findExecutable(argv.at(0));
    if (!path) {
        evidence.startFailed = true;
        evidence.stderrText = "cannot start " + argv[0] + ": " + std::strerror(ENOENT);
        return classify(evidence);
    }
    std::vector<char*> cargv;
    for (const auto& a : argv)
        cargv.push_back(const_cast<char*>(a.c_str()));
    cargv.push_back(nullptr);
    const std::string progressVar = std::string(kProgressEnv) + "=" + dir_;
    std::vector<char*> envp;
    for (char** e = environ; *e; ++e)
        if (!std::string_view(*e).starts_with(std::string(kProgressEnv) + "=")) envp.push_back(*e);
    envp.push_back(const_cast<char*>(progressVar.c_str()));
    envp.push_back(nullptr);
    ChildSetup child;
    child.parent = ::getpid();
    child.isolate = loopbackOnly_ && loopbackIsolationAvailable();
    child.userNamespace = ::geteuid() != 0;
    child.uidMap = std::to_string(::geteuid()) + " " + std::to_string(::geteuid()) + " 1";
    child.gidMap = std::to_string(::getegid()) + " " + std::to_string(::getegid()) + " 1";

    int errPipe[2], execPipe[2];
    if (::pipe2(errPipe, O_CLOEXEC) != 0) sysFail("pipe()");
    if (::pipe2(execPipe, O_CLOEXEC) != 0) {
        ::close(errPipe[0]);
        ::close(errPipe[1]);
        sysFail("pipe()");
    }
    child.errFd = errPipe[1];
    child.execFd = execPipe[1];
    ::prctl(PR_SET_CHILD_SUBREAPER, 1);
    pid_ = ::fork();
    if (pid_ == 0) runChild(child, path->c_str(), cargv.data(), envp.data());
    const int forkErrno = errno;
    ::close(errPipe[1]);
    ::close(execPipe[1]);
    int childErr = pid_ < 0 ? forkErrno : 0;
    if (pid_ > 0) {
        ssize_t n;
        while ((n = ::read(execPipe[0], &childErr, sizeof childErr)) < 0 && errno == EINTR) {
        }
        if (n != static_cast<ssize_t>(sizeof childErr)) childErr = 0; // EOF: exec succeeded
        if (childErr != 0) {
            ::waitpid(pid_, nullptr, 0);
            pid_ = -1;
        }
    }
    ::close(execPipe[0]);
    if (childErr != 0) {
        ::close(errPipe[0]);
        pid_ = -1;
        evidence.startFailed = true;
        evidence.stderrText = "cannot start " + argv[0] + ": " + std::strerror(childErr);
        return classify(evidence);
    }
    startTime_ = startTimeOf(pid_);
    yieldToTheRanks();

    protocol::StreamDecoder decoder;
    int conn = -1;
    int errFd = errPipe[0];
    ::fcntl(errFd, F_SETFL, O_NONBLOCK);
    auto lastBytes = std::chrono::steady_clock::now();
    auto lastTreeScan = lastBytes;
    int status = 0;
    auto exitedAt = std::chrono::steady_clock::time_point{};
    auto endAt = std::chrono::steady_clock::time_point{};
    auto failureAt = std::chrono::steady_clock::time_point{};
    // Which ranks' processes are stopped (SIGSTOP), as of each scan of the tree: the most direct
    // evidence of a stuck rank. A rank is stopped when any live process of it is (a wrapper or a
    // child shares its rank); a rank whose processes are gone keeps its last state (a stopped rank
    // is killed by the tear-down its peers' timeout starts). The scan when a failure arrives only
    // adds (mpirun's tear-down may have sent SIGCONT already), and none runs once this supervisor
    // froze the job (then every process is stopped).
    std::map<int, bool> rankStopped;
    bool frozen = false;
    const auto scanTree = [&](bool onlyAdd) {
        if (frozen) return;
        collectTree();
        std::map<int, bool> now;
        for (const ProcessId& p : tree_)
            if (const int rank = mpiRankOf(p.pid); rank >= 0 && startTimeOf(p.pid) == p.startTime)
                now[rank] = now[rank] || isStopped(p.pid);
        for (const auto& [rank, stopped] : now)
            rankStopped[rank] = stopped || (onlyAdd && rankStopped[rank]);
        evidence.stoppedRanks.clear();
        for (const auto& [rank, stopped] : rankStopped)
            if (stopped) evidence.stoppedRanks.push_back(rank);
    };
    bool progressTaken = false;
    // The ranks' progress while they still run: the ones waiting keep their heartbeat fresh.
    const auto takeProgress = [&] {
        if (progressTaken) return;
        progressTaken = true;
        evidence.progress = readProgress(dir_);
    };

    // Decodes the stream's bytes as they come; false when they cannot be read.
    const auto consume = [&](const std::string& chunk) -> bool {
        lastBytes = std::chrono::steady_clock::now();
        if (onBytes) onBytes(chunk);
        try {
            decoder.feed(chunk);
            while (auto record = decoder.next()) {
                if (std::holds_alternative<protocol::End>(*record)) {
                    evidence.sawEnd = true;
                    endAt = std::chrono::steady_clock::now();
                } else if (auto* h = std::get_if<protocol::Handshake>(&*record);
                           h && evidence.unitNames.empty()) {
                    evidence.worldSize = h->worldSize;
                    const auto config = nlohmann::json::parse(h->configJson, nullptr, false);
                    // Bounded: added to the step the ending names.
                    if (config.is_object() && config.contains("steps_before") &&
                        config["steps_before"].is_number_integer()) {
                        const auto before = config["steps_before"].get<std::int64_t>();
                        if (before >= 0 && before <= (std::int64_t{1} << 53))
                            evidence.stepsBefore = before;
                    }
                    if (config.is_object() && config.contains("units") &&
                        config["units"].is_array())
                        for (const auto& u : config["units"])
                            evidence.unitNames.push_back(
                                u.is_object() ? u.value("name", std::string()) : std::string());
                } else if (std::holds_alternative<protocol::Report>(*record))
                    evidence.sawReport = true;
                else if (auto* s = std::get_if<protocol::StepSummary>(&*record))
                    evidence.lastCompleteStep = std::max(evidence.lastCompleteStep, s->step);
                else if (auto* f = std::get_if<protocol::Failure>(&*record);
                         f && !evidence.failureRank) {
                    evidence.failureRank = f->rank;
                    evidence.failureStep = f->step;
                    evidence.failureMessage =
                        protocol::printableText(f->message); // shown, never interpreted
                    failureAt = std::chrono::steady_clock::now();
                    scanTree(true);
                    takeProgress();
                }
                if (onRecord) onRecord(*record);
            }
        } catch (const Error& e) {
            evidence.streamError = e.what();
            return false; // a stream we cannot read is useless to keep running
        }
        return true;
    };

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
            if (!chunk.empty() && !consume(chunk)) break;
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
        if (now - lastTreeScan > std::chrono::milliseconds(500) && !evidence.failureRank) {
            scanTree(false);
            lastTreeScan = now;
        }
        // The run is complete (report and End received) but the job does not exit — mpirun
        // stopped, or a rank hangs in MPI_Finalize: what is finished is finished.
        if (evidence.sawEnd && evidence.sawReport && !evidence.failureRank &&
            now - endAt > std::min<std::chrono::milliseconds>(kAfterEnd, stallTimeout)) {
            evidence.hungAfterEnd = true;
            break;
        }
        // A rank said why the job fails: its tail is not worth waiting for (MPI_Abort with a
        // stopped rank takes mpirun many seconds).
        if (evidence.failureRank && now - failureAt > kDrain) break;
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
            evidence.childStopped = isStopped(pid_);
            scanTree(false);
            takeProgress();
            break;
        }
    }
    // Note: a job that is ended (a stop, a signal, a stall, a failing rank) is frozen first:
    // every process of it is stopped where it is, so no rank starts another step or commits
    // another checkpoint after the decision, and a rank that was stopped is never resumed to
    // train on. What the frozen ranks had already sent is then read to its end, so the recording
    // and the ending agree; only then are the processes ended (teardown).
    if (!evidence.exited && pid_ > 0) {
        frozen = true; // every process is stopped from here: no scan tells anything
        freeze();
        for (bool more = conn >= 0; more;) {
            std::string rest;
            more = drain(conn, rest) && !rest.empty();
            if (!rest.empty() && !consume(rest)) more = false;
        }
    }
    if (conn >= 0) ::close(conn);
    if (errFd >= 0) {
        drain(errFd, evidence.stderrText);
        ::close(errFd);
    }
    if (!progressTaken) evidence.progress = readProgress(dir_); // a timeout in a stderr line only
    if (evidence.exited) {
        evidence.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    } else {
        teardown();
        evidence.exitCode = 1;
    }
    killStragglers();
    return classify(evidence);
}

} // namespace shardscope::launch
