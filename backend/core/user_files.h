#pragma once
// The files a user names on a command line: outputs (reports, recordings, weights, endings) and
// the --data input. One implementation for every output, so every output obeys the same rules.
//
// Note: an output is written to a temporary file beside its target and renamed into place when
// complete, so a reader never sees half a file and a crash never leaves one under the target's
// name. The rules that make that safe:
//   - Only a regular file or a missing path is ever replaced. A directory, device node, FIFO or
//     socket (also behind a symbolic link) is refused with one line: renaming over /dev/null
//     would replace the device with a regular file, and a FIFO would block the writer. A
//     symbolic link to a regular file is followed: the file it names is replaced, the link stays.
//   - Temporary names are unique per process and per file ("<target>.<pid>-<random>.partial",
//     created with O_EXCL): two runs writing the same target never share a temporary file.
//   - The rename never silently clobbers a file another process finished meanwhile: when the
//     target appeared, or changed, since this output was opened, this file is kept beside it
//     ("<stem>.<pid><ext>") and commit() says where it went.
//   - checkOutputPath() applies the same checks (and creates and removes a probe file) before
//     anything runs, so a bad output path costs nothing.
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace shardscope {

// errno as a lower-case phrase for a one-line message: ENOSPC → "no space left on device".
std::string ioErrorText(int err);

// Throws Error(InvalidArgument) when `path` is empty, and Error(Io) when it is a directory or a
// special file, its folder does not exist or no file can be created in it; `flag` leads the
// message ("--json: folder 'out' does not exist"). Both are bad input (exit 2).
void checkOutputPath(const std::string& path, const std::string& flag);

// Refuses (Error(InvalidArgument), one line naming both flags) two files of `named` that are the
// same file — the same path, or one reached through a link or "..". Empty paths are skipped.
// Inputs belong in the list too: an output must not replace the run's own --data.
void checkDistinctFiles(const std::vector<std::pair<std::string, std::string>>& named);

class OutputFile {
public:
    // Checks the target as checkOutputPath does and creates the temporary file beside it.
    OutputFile(const std::string& path, std::string flag);
    ~OutputFile(); // removes the temporary file unless committed
    OutputFile(const OutputFile&) = delete;
    OutputFile& operator=(const OutputFile&) = delete;

    // Throws Error(Io) "<flag>: cannot write '<path>': <ioErrorText>".
    void write(std::string_view bytes);
    void flush();
    // Writes what is buffered, closes and renames into place. Returns where the file went: the
    // target, or the kept name when another process wrote the target meanwhile.
    std::string commit();

    const std::string& path() const { return path_; }
    const std::string& flag() const { return flag_; }

private:
    [[noreturn]] void fail(const std::string& what, int err);
    std::string path_;   // as given (messages)
    std::string target_; // symbolic links resolved
    std::string temp_;
    std::string flag_;
    std::string buffer_;
    int fd_ = -1;
    bool existed_ = false;
    std::uint64_t device_ = 0, inode_ = 0, size_ = 0;
    std::int64_t mtimeNs_ = 0;
};

// Largest --data file accepted (4 GiB): the bytes are read window by window, never whole, but a
// file beyond this is a mistake (a device, an image) rather than a corpus.
inline constexpr std::uint64_t kMaxDataFileBytes = std::uint64_t{4} << 30;

// Opens an input file for reading without blocking (a FIFO never blocks): regular files only,
// at least `minBytes` and at most `maxBytes` long. Returns the descriptor (close-on-exec; the
// caller closes it) and the size. Error(Io) naming `flag` (none when empty) when it cannot be
// opened or is a directory or special file; Error(InvalidArgument) for a size out of range.
std::pair<int, std::uint64_t> openInputFile(const std::string& path, const std::string& flag,
                                            std::uint64_t minBytes, std::uint64_t maxBytes);

} // namespace shardscope
