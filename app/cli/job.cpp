#include "job.h"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "core/error.h"

extern char** environ;

namespace shardscope::cli {
namespace {

std::atomic<bool> gInterrupted{false};
void onSigint(int) { gInterrupted = true; }

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
    // The whole process group: mpirun and every rank it started.
    ::kill(-pid_, SIGTERM);
    for (int i = 0; i < 30; ++i) {
        int status = 0;
        if (::waitpid(pid_, &status, WNOHANG) == pid_) {
            pid_ = -1;
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (pid_ > 0) {
        ::kill(-pid_, SIGKILL);
        ::waitpid(pid_, nullptr, 0);
        pid_ = -1;
    }
}

JobResult Job::run(const std::vector<std::string>& argv,
                   const std::function<void(const protocol::Record&)>& onRecord,
                   const std::function<void(std::string_view)>& onBytes,
                   std::chrono::milliseconds stallTimeout) {
    int errPipe[2];
    if (::pipe2(errPipe, O_CLOEXEC) != 0) sysFail("pipe()");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, errPipe[1], STDERR_FILENO);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);
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
        errno = rc;
        sysFail("cannot start " + argv[0]);
    }
    auto previous = std::signal(SIGINT, onSigint);

    JobResult result;
    protocol::StreamDecoder decoder;
    int conn = -1;
    int errFd = errPipe[0];
    ::fcntl(errFd, F_SETFL, O_NONBLOCK);
    auto lastBytes = std::chrono::steady_clock::now();
    bool exited = false;
    int status = 0;
    auto exitedAt = std::chrono::steady_clock::time_point{};

    while (true) {
        std::vector<pollfd> fds;
        fds.push_back({conn >= 0 ? conn : listenFd_, POLLIN, 0});
        if (errFd >= 0) fds.push_back({errFd, POLLIN, 0});
        ::poll(fds.data(), fds.size(), 100);

        if (conn < 0) {
            conn = ::accept4(listenFd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
        } else {
            std::string chunk;
            if (!drain(conn, chunk)) {
                ::close(conn);
                conn = -2; // stream closed; do not accept another
            }
            if (!chunk.empty()) {
                lastBytes = std::chrono::steady_clock::now();
                if (onBytes) onBytes(chunk);
                decoder.feed(chunk);
                while (auto record = decoder.next()) {
                    if (std::holds_alternative<protocol::End>(*record)) result.sawEnd = true;
                    onRecord(*record);
                }
            }
        }
        if (errFd >= 0 && !drain(errFd, result.stderrText)) {
            ::close(errFd);
            errFd = -1;
        }
        if (!exited && ::waitpid(pid_, &status, WNOHANG) == pid_) {
            exited = true;
            exitedAt = std::chrono::steady_clock::now();
        }
        const auto now = std::chrono::steady_clock::now();
        // After exit, give the socket and stderr a moment to drain, then stop.
        if (exited && ((conn < 0 && errFd < 0) || now - exitedAt > std::chrono::seconds(2))) break;
        if (gInterrupted) {
            result.interrupted = true;
            break;
        }
        if (!exited && now - lastBytes > stallTimeout) {
            result.stalled = true;
            break;
        }
    }
    if (conn >= 0) ::close(conn);
    if (errFd >= 0) ::close(errFd);
    std::signal(SIGINT, previous);
    if (exited) {
        pid_ = -1;
        result.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    } else {
        teardown();
        result.exitCode = 1;
    }
    result.rankExit = launch::parseMpirunFailure(result.stderrText);
    return result;
}

} // namespace shardscope::cli
