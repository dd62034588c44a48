#pragma once
// Checkpoint files on disk: a rank's data file, the commit (metadata, rename, `latest`), the
// opening of DIR or DIR/step-K, the resharding load, verification and the listing `inspect`
// shows. No engine and no communicator here: the training glue (train/checkpointing.h) calls
// these per rank and agrees on success over its communicator.
//
// Crash safety: a step is written into DIR/step-K.tmp-<id>/ (every file fsynced), metadata.json
// is written last, the folder is renamed to step-K and DIR fsynced, then `latest` is replaced
// by rename of an fsynced temporary. At any instant DIR/latest names a complete step (or does
// not exist yet), and a complete step never changes. Leftover temporaries are ignored by
// loading and listed by inspect.
#include "checkpoint/format.h"
#include "checkpoint/reshard.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace shardscope::checkpoint {

// A rank's state for one unit in host memory: element i of the unit is master[i − begin], ….
struct SliceData {
    Span span;
    const float* master = nullptr;
    const float* m = nullptr;
    const float* v = nullptr;
};
struct SliceTarget {
    Span span;
    float* master = nullptr;
    float* m = nullptr;
    float* v = nullptr;
};

std::string tempDirName(std::int64_t step, const std::string& id); // "step-K.tmp-<id>"
// A fresh id for one save (pid, time and randomness): unique among concurrent savers.
std::string newSaveId();

// Rank 0, before the ranks write: creates DIR (and its parents) and DIR/<tempName>.
void createTemp(const std::string& root, const std::string& tempName);
// Writes and fsyncs DIR/<tempName>/rank-RRRRR.bin holding `slices` (empty spans skipped),
// hashed in chunks of `chunkElements` (the commit's metadata must say the same).
// Error(Io) naming the file and the cause (e.g. "no space left on device").
DataFile writeRankFile(const std::string& root, const std::string& tempName, int rank,
                       std::span<const SliceData> slices,
                       std::uint64_t chunkElements = kDefaultChunkElements);
// Rank 0, after every rank wrote: metadata.json, fsync, rename to step-K, fsync DIR, `latest`
// (unless it names a later step: `latest` never moves backwards). Returns the step folder's path.
std::string commit(const std::string& root, const std::string& tempName, const Metadata& m);
// Removes a temporary folder of a failed save (best effort).
void discardTemp(const std::string& root, const std::string& tempName);
// --save DIR: one job at a time saves into a folder. Holds DIR/.shardscope-save.lock (flock)
// for its lifetime; creates DIR (not its parents). Another job saving there:
// Error(InvalidArgument); a missing parent, a folder where no file can be created, a lock the file
// system refuses: Error(Io). shardscope-cli holds it for the jobs it runs; the worker run directly,
// itself.
// Holding the lock, it removes what saves that never finished left in DIR (this user's
// `step-K.tmp-<id>` folders and `latest.step-K.tmp-<id>` files: no save runs there but this
// job's, which has not started); swept() names them.
class SaveFolderLock {
public:
    explicit SaveFolderLock(const std::string& dir);
    ~SaveFolderLock();
    SaveFolderLock(const SaveFolderLock&) = delete;
    SaveFolderLock& operator=(const SaveFolderLock&) = delete;
    const std::vector<std::string>& swept() const { return swept_; }

private:
    int fd_ = -1;
    std::vector<std::string> swept_;
};

// Why DIR/step-K may not be replaced by a save of step K, or empty when it may: it is absent, or
// provably a ShardScope checkpoint step of that step (a folder, not a link, whose metadata reads
// back, holding nothing but its metadata and the data files the metadata lists). A save never
// replaces anything else: a folder of the user's that happens to be named step-K stays.
std::string replaceProblem(const std::string& root, std::int64_t step);
// The K of every DIR/step-K entry (folder or not), ascending; empty when DIR cannot be listed.
std::vector<std::int64_t> stepFolders(const std::string& root);

struct Opened {
    std::string root; // DIR
    std::string dir;  // DIR/step-K
    Metadata meta;
};
// `path` is DIR (its `latest`) or DIR/step-K. Error(Format) / Error(Io): one line naming the
// file and what is wrong (not a checkpoint, unreadable, malformed metadata).
Opened openCheckpoint(const std::string& path);

struct LoadStats {
    std::uint64_t bytesNeeded = 0; // the plan's bytes (master + m + v of the targets)
    // Bytes read from the files: version 2 reads the chunks the needs overlap (at most one
    // partly needed chunk at each end of a block's part), version 1 every touched range whole.
    std::uint64_t bytesRead = 0;
    std::size_t filesTouched = 0;
};
// Fills every target from the files the plan names, reading only what overlaps (preadv) and
// checking the sha256 of every chunk (version 1: range) it read and each touched file's size.
// Error(Format) naming the file on a mismatch; targets may then hold partial data (the caller
// discards them).
LoadStats load(const Opened& c, std::span<const SliceTarget> targets);

struct FileCheck {
    std::string name;
    std::uint64_t bytes = 0; // as found (0 when missing)
    enum class State { Ok, Missing, WrongSize, BadChecksum, Unreadable } state = State::Ok;
    std::string problem; // one phrase, empty when Ok
};
// Re-hashes every data file of the step (whole file and every range).
std::vector<FileCheck> verifyFiles(const Opened& c);
// "ok", "missing", "wrong size", "checksum mismatch", "unreadable" (also the JSON's names).
std::string_view stateName(FileCheck::State state);
// The problem without the state's name it may begin with ("checksum mismatch (in unit 'x')" →
// "(in unit 'x')"): what follows a state name shown in other words (the GUI's translation).
std::string_view problemDetail(const FileCheck& f);
// State and problem as one phrase, the state said once: "checksum mismatch (in unit 'x')",
// "wrong size: 8 bytes, the metadata says 431400", "ok".
std::string describe(const FileCheck& f);

struct StepEntry {
    std::string name;             // "step-K"
    std::optional<Metadata> meta; // empty when its metadata is unreadable
    std::string problem;          // why not
};
struct Listing {
    std::string root;
    std::string latest;             // what DIR/latest names ("" when absent)
    std::vector<StepEntry> steps;   // ordered by step
    std::vector<std::string> temps; // leftovers of interrupted saves
};
// Error(Io) when DIR cannot be listed; Error(Format) when it holds no step, temp or `latest`.
// DIR may be one step's folder (it holds metadata.json): the listing is that step of its parent.
Listing listCheckpoints(const std::string& root);

// The consolidated fp32 weights (and with `optimizer` the Adam moments as <name>.exp_avg and
// <name>.exp_avg_sq) under the parameters' names and shapes, in the safetensors format.
// Written through core/user_files.h's OutputFile (atomic). Returns the bytes written.
// `beforeUnit` runs before each unit is read; what it throws stops the export and removes the
// temporary file (the CLI throws there once SIGINT/SIGTERM/SIGHUP arrived).
std::uint64_t exportSafetensors(const Opened& c, const std::string& out, bool optimizer,
                                const std::string& flag,
                                const std::function<void()>& beforeUnit = {});

// Whether writing `path` could replace a part of the checkpoint folder `root`, as both resolve
// now (a path not there yet by its folder): anything in a step folder (committed or temporary)
// or `latest`. A file beside the steps (root/model.safetensors, root/out/…) is not.
bool touchesCheckpoint(const std::string& path, const std::string& root);

} // namespace shardscope::checkpoint
