#pragma once
// A recording as files other tools read:
//
// Perfetto / chrome://tracing (Chrome trace-event JSON): one process per rank ("rank R"),
// threads for compute, communication, gathered-parameter buffers (param_full lifetimes) and
// tier transfers ("transfers": device ↔ host copies, NVMe reads and writes; args direction,
// bytes, GB/s, unit) —
// nested or overlapping spans that would not nest on one thread get a sub-track of their own,
// so every thread's B/E pairs nest —, a slice per span with args (unit, phase, step, bytes,
// peers, algbw / busbw in GB/s from plan's collective traits), a counter track per ledger
// category (and tier, when not the device) plus the rank's live total, and flow arrows joining
// the ranks of one collective (replay's FlowIndex), earliest begin first.
//
// CSV: the ledger over time, one row per allocation or free: time_ns,rank,category,tier,unit,
// live_bytes (the category's live bytes on that rank and tier after the event).
//
// Times are the replay clock (replay_model.h): each step's real timestamps, steps back to back.
// Both are written through core/user_files.h: nothing appears under the target's name unless it
// is complete.
#include "trace_export/recording_file.h"

#include <cstdint>
#include <functional>
#include <string>

namespace shardscope::trace_export {

struct ExportCounts {
    std::uint64_t slices = 0, counters = 0, flows = 0, rows = 0;
};

// Return where the file went (OutputFile::commit) and what was written. `model` is a loaded
// recording's (loadRecording) or the GUI's run; it must have its RunInfo. Error(Io) naming
// `flag` when the file cannot be written (nothing is left under its name).
// `poll`, when given, is called before each megabyte is written; what it throws abandons the
// file (the CLI stops on SIGINT / SIGTERM that way, leaving no temporary file behind).
std::string writePerfetto(const replay::ReplayModel& model, const std::string& path,
                          const std::string& flag, ExportCounts& counts,
                          const std::function<void()>& poll = {});
std::string writeLedgerCsv(const replay::ReplayModel& model, const std::string& path,
                           const std::string& flag, ExportCounts& counts,
                           const std::function<void()>& poll = {});

} // namespace shardscope::trace_export
