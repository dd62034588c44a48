#pragma once
// Saving and resuming a Trainer's state as a checkpoint (backend/checkpoint, docs/checkpoints.md).
// Both are collective over the strategy's world: every rank calls them at the same step.
//
// Save: each rank snapshots the state it owns (fp32 master, Adam m and v) to host memory and
// writes its part — its replica share of replicated state, so no byte is written twice — into
// DIR/step-K.tmp-<id>/; rank 0 commits once every rank reported success. A failure on any rank
// (disk full) discards the temporary folder; the previous checkpoint and `latest` stay.
// Resume: each rank reads the ranges of the saved files that overlap what it owns now (any
// world size, any strategy), checks their checksums, and the trainer continues the run's step
// counter and data position.
#include "checkpoint/store.h"
#include "report/report.h"
#include "train/run_config.h"
#include "train/trainer.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace shardscope::train {

// A failed save or resume, as rank 0 reports it for the whole world: `rank` is the rank whose
// file or disk failed (the worker's line names it, once); `badInput` marks a checkpoint that
// cannot be resumed (damaged, truncated, missing file): bad input, exit 2, not a job failure.
class CheckpointError : public Error {
public:
    CheckpointError(ErrorKind kind, const std::string& message, int rank, bool badInput)
        : Error(kind, message), rank_(rank), badInput_(badInput) {}
    int rank() const noexcept { return rank_; }
    bool badInput() const noexcept { return badInput_; }

private:
    int rank_;
    bool badInput_;
};

// The metadata of `trainer`'s run as saved now (files not yet listed).
checkpoint::Metadata checkpointMetadata(Trainer& trainer, const RunConfig& config);

// Saves at the trainer's current run step into `root`. Returns the record rank 0 reports (all
// ranks get the step and path; bytes are this rank's). Throws on failure: rank 0 a
// CheckpointError(Io) with the first failing rank and its cause, the others Error(Comm) once
// rank 0 has left.
report::SaveRecord saveCheckpoint(Trainer& trainer, const RunConfig& config,
                                  const std::string& root);

struct PendingSave;
// The run's saves into config.saveDir, as --save-async says. Synchronous: save() is
// saveCheckpoint. Asynchronous: save() waits for the previous save and commits it (collective),
// snapshots this rank's share to host memory (a ledgered host allocation), starts writing and
// fsyncing it on a thread, and returns while training goes on; finish() (after the last step)
// waits and commits. The commit (metadata, rename, `latest`) always follows every rank's
// finished write; a writer's failure surfaces at the next save() or finish() as saveCheckpoint's
// does. Every rank calls save() and finish() at the same points.
class CheckpointSaver {
public:
    CheckpointSaver(Trainer& trainer, const RunConfig& config);
    ~CheckpointSaver(); // joins an in-flight writer (never commits it)
    CheckpointSaver(const CheckpointSaver&) = delete;
    CheckpointSaver& operator=(const CheckpointSaver&) = delete;
    void save();
    void finish();
    // The completed saves, in order; seconds_blocked is what each held the loop.
    const std::vector<report::SaveRecord>& records() const { return records_; }

private:
    void finishPending();
    Trainer& trainer_;
    const RunConfig& config_;
    std::unique_ptr<PendingSave> pending_;
    std::vector<report::SaveRecord> records_;
};

struct ResumeResult {
    report::ResumedFrom from;
    checkpoint::LoadStats stats; // this rank's
};
// Loads `path` (DIR or DIR/step-K) into the trainer's states and continues its counters.
// Collective: every rank learns whether any rank's part was damaged; rank 0 then throws a
// CheckpointError(Format, badInput) naming the file, the others Error(Comm) once it has left.
// Error(InvalidArgument) for a checkpoint of another model.
ResumeResult resumeCheckpoint(Trainer& trainer, const RunConfig& config, const std::string& path);

} // namespace shardscope::train
