// Saving: a rank's data file, the commit, temporaries.
#include "checkpoint/store.h"

#include "checkpoint/chunked.h"
#include "checkpoint/fs_util.h"
#include "checkpoint/sha256.h"
#include "core/error.h"
#include "core/user_files.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <fcntl.h>
#include <filesystem>
#include <optional>
#include <random>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace shardscope::checkpoint {

using namespace detail;
namespace fs = std::filesystem;

std::string tempDirName(std::int64_t step, const std::string& id) {
    return stepDirName(step) + ".tmp-" + id;
}

std::string newSaveId() {
    std::random_device rd;
    const auto now = std::chrono::steady_clock::now().time_since_epoch().count();
    char buf[64];
    std::snprintf(buf, sizeof buf, "%d-%08x", static_cast<int>(::getpid()),
                  static_cast<unsigned>(rd() ^ static_cast<unsigned>(now)));
    return buf;
}

void createTemp(const std::string& root, const std::string& tempName) {
    std::error_code ec;
    fs::create_directories(root, ec);
    if (ec) ioFail(root, "create the folder", ec.value());
    if (!fs::is_directory(root, ec))
        throw Error(ErrorKind::Io, "checkpoint folder '" + root + "' is not a folder");
    const std::string dir = root + "/" + tempName;
    if (::mkdir(dir.c_str(), 0755) != 0) ioFail(dir, "create the folder", errno);
}

DataFile writeRankFile(const std::string& root, const std::string& tempName, int rank,
                       std::span<const SliceData> slices, std::uint64_t chunkElements) {
    if (chunkElements < kMinChunkElements || chunkElements > kMaxChunkElements)
        throwInvalid("a checkpoint chunk of " + std::to_string(chunkElements) +
                     " elements is outside [" + std::to_string(kMinChunkElements) + ", " +
                     std::to_string(kMaxChunkElements) + "]");
    DataFile f;
    f.name = dataFileName(rank);
    f.rank = rank;
    const std::string path = root + "/" + tempName + "/" + f.name;
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) ioFail(path, "create", errno);
    try {
        writeChunked(fd, path, slices, chunkElements, f);
    } catch (...) {
        ::close(fd);
        throw;
    }
    if (::close(fd) != 0) ioFail(path, "close", errno);
    return f;
}

namespace {

// The step DIR/latest names, if it is readable and names one.
std::optional<std::int64_t> latestStep(const std::string& root) {
    std::string name;
    try {
        name = readSmallFile(root + "/latest", 64);
    } catch (const Error&) {
        return std::nullopt;
    }
    while (!name.empty() && (name.back() == '\n' || name.back() == '\r'))
        name.pop_back();
    return stepOf(name);
}

} // namespace

std::string commit(const std::string& root, const std::string& tempName, const Metadata& m) {
    const std::string temp = root + "/" + tempName;
    // What is committed must read back: the same checks a loader makes, before anything moves.
    const std::string text = toJson(m);
    parseMetadata(text, temp + "/metadata.json");
    writeNewFile(temp + "/metadata.json", text);
    fsyncPath(temp, true);
    const std::string name = stepDirName(m.step);
    const std::string dir = root + "/" + name;
    if (::rename(temp.c_str(), dir.c_str()) != 0) {
        if (errno != ENOTEMPTY && errno != EEXIST) ioFail(dir, "rename '" + temp + "' to", errno);
        // The same step saved again (a conversion into its own folder): swap atomically, so
        // step-K is complete at every instant, then drop the old one — only a checkpoint step.
        if (const std::string problem = replaceProblem(root, m.step); !problem.empty())
            throw Error(ErrorKind::Io, "cannot replace '" + dir + "': " + problem);
        if (::renameat2(AT_FDCWD, temp.c_str(), AT_FDCWD, dir.c_str(), RENAME_EXCHANGE) != 0)
            ioFail(dir, "replace", errno);
        std::error_code ec;
        fs::remove_all(temp, ec);
    }
    fsyncPath(root, true);
    // `latest` never moves backwards: a conversion (or any save) of an older step than the one
    // it names leaves it alone; the step folder is complete and loadable by its path. A name of
    // a step that is not there (removed, or written by hand) holds nothing back.
    if (const std::optional<std::int64_t> named = latestStep(root);
        named && *named > m.step &&
        fs::is_regular_file(root + "/" + stepDirName(*named) + "/metadata.json"))
        return dir;
    const std::string latestTemp = root + "/latest." + tempName;
    writeNewFile(latestTemp, name + "\n");
    if (::rename(latestTemp.c_str(), (root + "/latest").c_str()) != 0) {
        const int err = errno;
        ::unlink(latestTemp.c_str());
        ioFail(root + "/latest", "replace", err);
    }
    fsyncPath(root, true);
    return dir;
}

SaveFolderLock::SaveFolderLock(const std::string& dir) {
    if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST)
        throw Error(ErrorKind::Io,
                    "--save: cannot create the folder '" + dir + "': " + ioErrorText(errno));
    const std::string lock = dir + "/.shardscope-save.lock";
    fd_ = ::open(lock.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd_ < 0)
        throw Error(ErrorKind::Io,
                    "--save: cannot write into '" + dir + "': " + ioErrorText(errno));
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
        const int err = errno;
        ::close(fd_);
        fd_ = -1;
        if (err != EWOULDBLOCK)
            throw Error(ErrorKind::Io, "--save: cannot lock '" + lock + "': " + ioErrorText(err));
        throwInvalid("--save: another job is saving into '" + dir +
                     "'; give another folder or wait for it");
    }
    std::error_code ec;
    for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
        const std::string name = e.path().filename().string();
        const bool latestTemp = name.rfind("latest.", 0) == 0;
        const std::string step = latestTemp ? name.substr(7) : name;
        // Exactly the names saves give their temporaries: step-K.tmp-<decimal id>.
        const std::size_t tmp = step.find(".tmp-");
        if (tmp == std::string::npos || !stepOf(step.substr(0, tmp)) || tmp + 5 >= step.size() ||
            step.size() - tmp - 5 > 20 ||
            step.find_first_not_of("0123456789", tmp + 5) != std::string::npos)
            continue;
        struct stat st {};
        if (::lstat(e.path().c_str(), &st) != 0 || st.st_uid != ::geteuid() ||
            !(latestTemp ? S_ISREG(st.st_mode) : S_ISDIR(st.st_mode)))
            continue;
        std::error_code removed;
        fs::remove_all(e.path(), removed);
        if (!removed) swept_.push_back(e.path().string());
    }
}

SaveFolderLock::~SaveFolderLock() {
    if (fd_ >= 0) ::close(fd_);
}

std::string_view stateName(FileCheck::State state) {
    switch (state) {
    case FileCheck::State::Ok:
        return "ok";
    case FileCheck::State::Missing:
        return "missing";
    case FileCheck::State::WrongSize:
        return "wrong size";
    case FileCheck::State::BadChecksum:
        return "checksum mismatch";
    case FileCheck::State::Unreadable:
        return "unreadable";
    }
    return "unknown";
}

std::string_view problemDetail(const FileCheck& f) {
    std::string_view p = f.problem;
    const std::string_view state = stateName(f.state);
    if (p.substr(0, state.size()) != state) return p;
    p.remove_prefix(state.size());
    while (!p.empty() && (p.front() == ':' || p.front() == ' '))
        p.remove_prefix(1);
    return p;
}

std::string describe(const FileCheck& f) {
    const std::string_view detail = problemDetail(f);
    std::string out(stateName(f.state));
    if (detail.empty()) return out;
    return out + (detail.front() == '(' ? " " : ": ") + std::string(detail);
}

std::vector<std::int64_t> stepFolders(const std::string& root) {
    std::vector<std::int64_t> out;
    std::error_code ec;
    for (const fs::directory_entry& e : fs::directory_iterator(root, ec))
        if (const std::optional<std::int64_t> k = stepOf(e.path().filename().string()))
            out.push_back(*k);
    std::sort(out.begin(), out.end());
    return out;
}

std::string replaceProblem(const std::string& root, std::int64_t step) {
    const std::string dir = root + "/" + stepDirName(step);
    struct stat st {};
    if (::lstat(dir.c_str(), &st) != 0) return errno == ENOENT ? std::string() : "cannot be read";
    if (!S_ISDIR(st.st_mode)) return "it is not a folder";
    Metadata meta;
    try {
        meta = parseMetadata(readSmallFile(dir + "/metadata.json", kMaxMetadataBytes),
                             dir + "/metadata.json");
    } catch (const Error&) {
        return "it is not a checkpoint step (no readable metadata.json)";
    }
    if (meta.step != step) return "its metadata is of step " + std::to_string(meta.step);
    std::error_code ec;
    int shown = 0;
    bool more = false;
    std::string own;
    for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
        const std::string name = e.path().filename().string();
        const bool listed = name == "metadata.json" ||
                            std::any_of(meta.files.begin(), meta.files.end(),
                                        [&](const DataFile& f) { return f.name == name; });
        if (listed) continue;
        if (shown == 3) {
            more = true;
            continue;
        }
        if (!own.empty()) own += ", ";
        own.append(name, 0, 64);
        ++shown;
    }
    if (ec) return "cannot be listed";
    if (!own.empty())
        return "it holds files that are not the checkpoint's (" + own + (more ? ", …" : "") + ")";
    return {};
}

void discardTemp(const std::string& root, const std::string& tempName) {
    std::error_code ec;
    fs::remove_all(root + "/" + tempName, ec);
}

bool touchesCheckpoint(const std::string& path, const std::string& root) {
    std::error_code ec;
    const std::filesystem::path p = std::filesystem::weakly_canonical(path, ec);
    if (ec) return false;
    const std::filesystem::path d = std::filesystem::weakly_canonical(root, ec);
    if (ec || d.empty()) return false;
    const auto [dEnd, pAt] = std::mismatch(d.begin(), d.end(), p.begin(), p.end());
    if (dEnd != d.end() || pAt == p.end()) return false; // not inside
    const std::string first = pAt->string();
    if (first.starts_with("step-"))
        return true; // a step folder, committed or temporary, or its name
    return std::next(pAt) == p.end() && first.starts_with("latest"); // latest, or its temporary
}

} // namespace shardscope::checkpoint
