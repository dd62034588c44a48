#pragma once
// A recording file (.sstrace) read into the replay (protocol's StreamDecoder → replay's
// StreamAssembler → ReplayModel), the way the GUI reads one, for exports and tools.
#include "replay/replay_model.h"
#include "report/report.h"

#include <memory>
#include <string>

namespace shardscope::trace_export {

struct LoadedRecording {
    replay::ReplayModel model;                       // every step, ledger snapshots
    std::shared_ptr<const report::RunReport> report; // null when the run did not finish
    bool ended = false;                              // an End or Failure record closed it
    std::int64_t steps = 0;                          // steps in the model
};

// Error(Io) when the file cannot be read (or is not a regular file), Error(Format) with one line
// naming the file when it is not a recording, stops inside a record ("truncated"), has no
// handshake or is inconsistent. A recording cut at a record boundary reads (ended == false).
LoadedRecording loadRecording(const std::string& path, const std::string& flag);

} // namespace shardscope::trace_export
