#include "checkpoint/fs_util.h"

#include "core/error.h"
#include "core/user_files.h"

#include <cerrno>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace shardscope::checkpoint::detail {

void ioFail(const std::string& path, const std::string& what, int err) {
    throw Error(ErrorKind::Io, "cannot " + what + " '" + path + "': " + ioErrorText(err));
}

void writeAll(int fd, const void* data, std::size_t bytes, const std::string& path) {
    const auto* p = static_cast<const char*>(data);
    while (bytes > 0) {
        const ::ssize_t n = ::write(fd, p, bytes);
        if (n < 0) {
            if (errno == EINTR) continue;
            ioFail(path, "write", errno);
        }
        p += n;
        bytes -= static_cast<std::size_t>(n);
    }
}

void fsyncPath(const std::string& path, bool directory) {
    const int fd =
        ::open(path.c_str(), (directory ? O_RDONLY | O_DIRECTORY : O_RDONLY) | O_CLOEXEC);
    if (fd < 0) ioFail(path, "open", errno);
    if (::fsync(fd) != 0) {
        const int err = errno;
        ::close(fd);
        ioFail(path, "sync", err);
    }
    ::close(fd);
}

void writeNewFile(const std::string& path, std::string_view text) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) ioFail(path, "create", errno);
    try {
        writeAll(fd, text.data(), text.size(), path);
        if (::fsync(fd) != 0) ioFail(path, "sync", errno);
    } catch (...) {
        ::close(fd);
        ::unlink(path.c_str());
        throw;
    }
    if (::close(fd) != 0) ioFail(path, "close", errno);
}

void readAt(int fd, void* out, std::size_t bytes, std::uint64_t offset, const std::string& path) {
    auto* p = static_cast<char*>(out);
    while (bytes > 0) {
        const ::ssize_t n = ::pread(fd, p, bytes, static_cast<::off_t>(offset));
        if (n < 0) {
            if (errno == EINTR) continue;
            ioFail(path, "read", errno);
        }
        if (n == 0)
            throw Error(ErrorKind::Format, "'" + path + "' is truncated (ends before byte " +
                                               std::to_string(offset + bytes) + ")");
        p += n;
        bytes -= static_cast<std::size_t>(n);
        offset += static_cast<std::uint64_t>(n);
    }
}

int openDataFile(const std::string& path, std::uint64_t bytes) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        if (errno == ENOENT) throw Error(ErrorKind::Format, "'" + path + "' is missing");
        ioFail(path, "open", errno);
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        throw Error(ErrorKind::Format, "'" + path + "' is not a regular file");
    }
    if (static_cast<std::uint64_t>(st.st_size) != bytes) {
        ::close(fd);
        throw Error(ErrorKind::Format, "'" + path + "' is " + std::to_string(st.st_size) +
                                           " bytes; the metadata says " + std::to_string(bytes) +
                                           " (truncated or replaced)");
    }
    // Read front to back: let the kernel read ahead generously.
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    return fd;
}

void closeFd(int fd) {
    ::close(fd);
}

// "step-12" → 12; nullopt for anything else (temporaries included).
std::optional<std::int64_t> stepOf(std::string_view name) {
    if (name.size() < 6 || name.size() > 5 + 13 || name.substr(0, 5) != "step-")
        return std::nullopt;
    std::int64_t k = 0;
    for (char c : name.substr(5)) {
        if (c < '0' || c > '9') return std::nullopt;
        k = k * 10 + (c - '0');
    }
    return k;
}

std::string readSmallFile(const std::string& path, std::uint64_t maxBytes) {
    const auto [fd, size] = openInputFile(path, "", 0, maxBytes);
    std::string text(static_cast<std::size_t>(size), '\0');
    try {
        readAt(fd, text.data(), text.size(), 0, path);
    } catch (...) {
        ::close(fd);
        throw;
    }
    ::close(fd);
    return text;
}

} // namespace shardscope::checkpoint::detail
