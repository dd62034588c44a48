#include "launch/single_copy.h"

#include <csignal>
#include <cstdint>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

namespace shardscope::launch {

namespace {

bool probe() {
    int ready[2];
    if (::pipe(ready) != 0) return false;
    // The value lives at the same address in both children (fork copies the parent).
    static volatile std::uint64_t value = 0x5348415244u;
    const pid_t holder = ::fork();
    if (holder < 0) {
        ::close(ready[0]);
        ::close(ready[1]);
        return false;
    }
    if (holder == 0) { // only async-signal-safe calls in a child of a possibly threaded parent
        ::close(ready[0]);
        const char c = 1;
        if (::write(ready[1], &c, 1) != 1) ::_exit(1);
        for (;;)
            ::pause();
    }
    ::close(ready[1]);
    char c = 0;
    const bool up = ::read(ready[0], &c, 1) == 1;
    ::close(ready[0]);
    bool works = false;
    if (up) {
        const pid_t reader = ::fork();
        if (reader == 0) { // the holder's sibling, as two ranks under mpirun are
            std::uint64_t got = 0;
            iovec local{&got, sizeof got};
            iovec remote{const_cast<std::uint64_t*>(&value), sizeof value};
            const ssize_t n = ::process_vm_readv(holder, &local, 1, &remote, 1, 0);
            ::_exit(n == static_cast<ssize_t>(sizeof got) && got == value ? 0 : 1);
        }
        if (reader > 0) {
            int status = 0;
            while (::waitpid(reader, &status, 0) < 0) {
            }
            works = WIFEXITED(status) && WEXITSTATUS(status) == 0;
        }
    }
    ::kill(holder, SIGKILL);
    while (::waitpid(holder, nullptr, 0) < 0) {
    }
    return works;
}

} // namespace

bool crossMemoryAttachWorks() {
    static const bool works = probe();
    return works;
}

} // namespace shardscope::launch
