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
#include <cstdint>
#include <string>

#include "checkpoint/store.h"
#include "report/report.h"
#include "train/run_config.h"
#include "train/trainer.h"

namespace shardscope::train {

// The metadata of `trainer`'s run as saved now (files not yet listed).
checkpoint::Metadata checkpointMetadata(Trainer& trainer, const RunConfig& config);

// Saves at the trainer's current run step into `root`. Returns the record rank 0 reports (all
// ranks get the step and path; bytes are this rank's). Throws Error(Io) on failure: rank 0
// with the first failing rank's cause, the others once rank 0 has left.
report::SaveRecord saveCheckpoint(Trainer& trainer, const RunConfig& config, const std::string& root);

struct ResumeResult {
    report::ResumedFrom from;
    checkpoint::LoadStats stats; // this rank's
};
// Loads `path` (DIR or DIR/step-K) into the trainer's states and continues its counters.
// Throws Error(Format)/Error(Io) naming the file for a broken checkpoint, Error(InvalidArgument)
// for one of another model.
ResumeResult resumeCheckpoint(Trainer& trainer, const RunConfig& config, const std::string& path);

} // namespace shardscope::train
