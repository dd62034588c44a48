#pragma once
// POSIX helpers of the checkpoint store: whole writes, fsync of files and folders, errors as
// one line naming the path. Private to backend/checkpoint.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace shardscope::checkpoint::detail {

[[noreturn]] void ioFail(const std::string& path, const std::string& what, int err);
void writeAll(int fd, const void* data, std::size_t bytes, const std::string& path);
void fsyncPath(const std::string& path, bool directory);
// Creates `path` with `text`, fsynced (O_EXCL: never over an existing file).
void writeNewFile(const std::string& path, std::string_view text);
// Reads a small regular file whole (at most `maxBytes`).
std::string readSmallFile(const std::string& path, std::uint64_t maxBytes);
void readAt(int fd, void* out, std::size_t bytes, std::uint64_t offset, const std::string& path);
// Opens a data file read-only and checks it is a regular file of `bytes` bytes;
// Error(Format) "'<path>' is missing / is N bytes; the metadata says M …".
int openDataFile(const std::string& path, std::uint64_t bytes);

void closeFd(int fd);
// "step-12" → 12; nullopt for anything else (temporaries included).
std::optional<std::int64_t> stepOf(std::string_view name);
struct FdCloser {
    explicit FdCloser(int f) : fd(f) {}
    int fd;
    ~FdCloser() {
        if (fd >= 0) closeFd(fd);
    }
    FdCloser(const FdCloser&) = delete;
    FdCloser& operator=(const FdCloser&) = delete;
};

} // namespace shardscope::checkpoint::detail
