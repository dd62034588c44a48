#include "core/user_files.h"

#include "core/error.h"

#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <filesystem>
#include <random>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace shardscope {

namespace fs = std::filesystem;

namespace {

std::string inQuotes(const std::string& path) {
    return "'" + path + "'";
}

// What sits at `path` (following links): the message refusing it, or empty when it can be
// replaced (a regular file or nothing).
std::string refusal(const std::string& path, const std::string& flag) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) return {};
    if (S_ISLNK(st.st_mode) && ::stat(path.c_str(), &st) != 0)
        return flag + ": " + inQuotes(path) + " is a symbolic link to nothing";
    if (S_ISDIR(st.st_mode)) return flag + ": " + inQuotes(path) + " is a directory";
    if (!S_ISREG(st.st_mode))
        return flag + ": " + inQuotes(path) +
               " is not a regular file (a device, FIFO or socket); outputs are written to regular "
               "files only";
    return {};
}

// The file a write replaces: links followed, so the link itself stays.
std::string resolveTarget(const std::string& path) {
    std::error_code ec;
    if (fs::is_symlink(path, ec)) {
        const fs::path real = fs::canonical(path, ec);
        if (!ec) return real.string();
    }
    return path;
}

fs::path folderOf(const std::string& path) {
    const fs::path parent = fs::path(path).parent_path();
    return parent.empty() ? fs::path(".") : parent;
}

// A fresh file beside `target`, created with O_EXCL: unique to this process and this call.
int createTemp(const std::string& target, std::string& temp) {
    static thread_local std::mt19937_64 random{std::random_device{}() ^
                                               (static_cast<std::uint64_t>(::getpid()) << 32)};
    for (int attempt = 0; attempt < 16; ++attempt) {
        char suffix[48];
        std::snprintf(suffix, sizeof suffix, ".%ld-%08llx.partial", static_cast<long>(::getpid()),
                      static_cast<unsigned long long>(random() & 0xffffffffu));
        temp = target + suffix;
        const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        // Held while the file is written: a later output's sweep never takes a live one.
        if (fd >= 0) ::flock(fd, LOCK_EX | LOCK_NB);
        if (fd >= 0 || errno != EEXIST) return fd;
    }
    errno = EEXIST;
    return -1;
}

// Note: the temporaries of an output's earlier writers that died before committing (SIGKILL) are
// removed when the same output is opened again — only what is provably dead: named exactly as
// createTemp names them, this user's regular file (not a link), untouched for 3 s, its pid gone,
// and no process holding its lock (every live writer does, from creation to commit).
void sweepDeadTemps(const std::string& target) {
    const fs::path folder = folderOf(target);
    const std::string prefix = fs::path(target).filename().string() + ".";
    std::error_code ec;
    for (const fs::directory_entry& e : fs::directory_iterator(folder, ec)) {
        const std::string name = e.path().filename().string();
        if (name.size() <= prefix.size() + 8 || name.rfind(prefix, 0) != 0 ||
            !name.ends_with(".partial"))
            continue;
        const std::string middle = name.substr(prefix.size(), name.size() - prefix.size() - 8);
        const std::size_t dash = middle.find('-');
        if (dash == 0 || dash == std::string::npos || dash > 9 || middle.size() - dash - 1 != 8 ||
            middle.find_first_not_of("0123456789") != dash ||
            middle.find_first_not_of("0123456789abcdef", dash + 1) != std::string::npos)
            continue;
        const long pid = std::stol(middle.substr(0, dash));
        if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;
        const std::string path = e.path().string();
        struct stat st {};
        if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid() ||
            ::time(nullptr) - st.st_mtime < 3)
            continue;
        const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) continue;
        struct stat opened {};
        if (::fstat(fd, &opened) == 0 && opened.st_ino == st.st_ino && opened.st_dev == st.st_dev &&
            ::flock(fd, LOCK_EX | LOCK_NB) == 0)
            ::unlink(path.c_str());
        ::close(fd);
    }
}

void checkFolder(const std::string& target, const std::string& flag) {
    const fs::path dir = folderOf(target);
    std::error_code ec;
    if (!fs::exists(dir, ec))
        throw Error(ErrorKind::Io, flag + ": folder " + inQuotes(dir.string()) + " does not exist");
    if (!fs::is_directory(dir, ec))
        throw Error(ErrorKind::Io, flag + ": " + inQuotes(dir.string()) + " is not a folder");
}

// "run.sstrace" → "run.<pid>.sstrace": beside the target, same extension.
std::string keptName(const std::string& target) {
    const fs::path p(target);
    return (p.parent_path() /
            (p.stem().string() + "." + std::to_string(::getpid()) + p.extension().string()))
        .string();
}

} // namespace

std::string ioErrorText(int err) {
    std::string text = std::strerror(err);
    // "No space left on device" → "no space …"; a leading acronym ("EOF …") keeps its capitals.
    if (text.size() > 1 && std::islower(static_cast<unsigned char>(text[1])))
        text[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(text[0])));
    return text;
}

void checkOutputPath(const std::string& path, const std::string& flag) {
    if (path.empty()) throwInvalid(flag + " needs a file name");
    if (std::string why = refusal(path, flag); !why.empty()) throw Error(ErrorKind::Io, why);
    const std::string target = resolveTarget(path);
    checkFolder(target, flag);
    // The one honest test of "can this file be written": create a file beside it. Catches
    // read-only folders and file systems, for root too.
    std::string probe;
    const int fd = createTemp(target, probe);
    if (fd < 0) {
        const int err = errno;
        throw Error(ErrorKind::Io, flag + ": cannot create files in " +
                                       inQuotes(folderOf(target).string()) + ": " +
                                       ioErrorText(err));
    }
    ::close(fd);
    ::unlink(probe.c_str());
}

void checkDistinctFiles(const std::vector<std::pair<std::string, std::string>>& named) {
    std::vector<fs::path> resolved;
    for (const auto& [flag, path] : named) {
        std::error_code ec;
        fs::path p = path.empty() ? fs::path() : fs::weakly_canonical(fs::absolute(path, ec), ec);
        if (ec) p = fs::absolute(path, ec).lexically_normal();
        resolved.push_back(p);
    }
    for (std::size_t i = 0; i < named.size(); ++i)
        for (std::size_t j = i + 1; j < named.size(); ++j) {
            if (named[i].second.empty() || named[j].second.empty()) continue;
            std::error_code ec;
            const bool same =
                resolved[i] == resolved[j] || fs::equivalent(named[i].second, named[j].second, ec);
            if (same)
                throwInvalid(named[i].first + " and " + named[j].first + " name the same file " +
                             inQuotes(named[j].second) + "; give each its own");
        }
}

OutputFile::OutputFile(const std::string& path, std::string flag)
    : path_(path), flag_(std::move(flag)) {
    if (path.empty()) throwInvalid(flag_ + " needs a file name");
    if (std::string why = refusal(path, flag_); !why.empty()) throw Error(ErrorKind::Io, why);
    target_ = resolveTarget(path);
    checkFolder(target_, flag_);
    struct stat st {};
    if (::stat(target_.c_str(), &st) == 0) {
        existed_ = true;
        device_ = static_cast<std::uint64_t>(st.st_dev);
        inode_ = static_cast<std::uint64_t>(st.st_ino);
        size_ = static_cast<std::uint64_t>(st.st_size);
        mtimeNs_ =
            static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
    }
    sweepDeadTemps(target_);
    fd_ = createTemp(target_, temp_);
    if (fd_ < 0) {
        const int err = errno;
        throw Error(ErrorKind::Io,
                    flag_ + ": cannot create " + inQuotes(path_) + ": " + ioErrorText(err));
    }
}

OutputFile::~OutputFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!temp_.empty()) ::unlink(temp_.c_str());
}

void OutputFile::fail(const std::string& what, int err) {
    throw Error(ErrorKind::Io,
                flag_ + ": cannot " + what + " " + inQuotes(path_) + ": " + ioErrorText(err));
}

void OutputFile::write(std::string_view bytes) {
    if (fd_ < 0) fail("write", EBADF);
    buffer_.append(bytes);
    if (buffer_.size() >= (std::size_t{1} << 16)) flush();
}

void OutputFile::flush() {
    std::size_t done = 0;
    while (done < buffer_.size()) {
        const ssize_t n = ::write(fd_, buffer_.data() + done, buffer_.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            const int err = errno;
            buffer_.clear();
            fail("write", err);
        }
        done += static_cast<std::size_t>(n);
    }
    buffer_.clear();
}

std::string OutputFile::commit() {
    flush();
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) fail("write", errno);
    // What is at the target now, against what was there when this output was opened.
    struct stat st {};
    const bool existsNow = ::stat(target_.c_str(), &st) == 0;
    bool changed = existsNow != existed_;
    if (existsNow && existed_) {
        const std::int64_t mtime =
            static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
        changed = static_cast<std::uint64_t>(st.st_dev) != device_ ||
                  static_cast<std::uint64_t>(st.st_ino) != inode_ ||
                  static_cast<std::uint64_t>(st.st_size) != size_ || mtime != mtimeNs_;
    }
    std::string destination = target_;
    if (changed) destination = keptName(target_);
    // link() refuses an existing name: a file that appears between the check and here is not
    // replaced either.
    if (!existed_ || changed) {
        if (::link(temp_.c_str(), destination.c_str()) == 0) {
            ::unlink(temp_.c_str());
            temp_.clear();
            return destination == target_ ? path_ : destination;
        }
        if (errno == EEXIST && !changed) destination = keptName(target_);
        if (errno == EEXIST && ::link(temp_.c_str(), destination.c_str()) == 0) {
            ::unlink(temp_.c_str());
            temp_.clear();
            return destination;
        }
        // File systems without hard links: a plain rename.
    }
    if (::rename(temp_.c_str(), destination.c_str()) != 0) fail("create", errno);
    temp_.clear();
    return destination == target_ ? path_ : destination;
}

std::pair<int, std::uint64_t> openInputFile(const std::string& path, const std::string& flag,
                                            std::uint64_t minBytes, std::uint64_t maxBytes) {
    // An empty flag: the caller's context says whose file it is (no "flag: " prefix).
    const std::string who = flag.empty() ? std::string() : flag + ": ";
    // O_NONBLOCK: opening a FIFO for reading must not wait for a writer; it is refused below.
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        const int err = errno;
        throw Error(ErrorKind::Io, who + "cannot read " + inQuotes(path) + ": " + ioErrorText(err));
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        const bool dir = S_ISDIR(st.st_mode);
        ::close(fd);
        throw Error(ErrorKind::Io, who + inQuotes(path) +
                                       (dir ? " is a directory, not a file"
                                            : " is not a regular file (a device, FIFO or socket)"));
    }
    const auto size = static_cast<std::uint64_t>(st.st_size);
    if (size < minBytes || size > maxBytes) {
        ::close(fd);
        if (size < minBytes)
            throwInvalid(who + inQuotes(path) + " has " + std::to_string(size) +
                         " bytes; at least " + std::to_string(minBytes) +
                         " (context + 1) are needed");
        throwInvalid(who + inQuotes(path) + " has " + std::to_string(size) + " bytes; at most " +
                     std::to_string(maxBytes) + " are read");
    }
    // Reads block from here on (a regular file never waits long).
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    return {fd, size};
}

} // namespace shardscope
