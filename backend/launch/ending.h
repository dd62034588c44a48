#pragma once
// How a job ended, decided in one place for every front end. The CLI prints describe(ending)
// as its one line; the GUI phrases the same typed fields in its own (translated) words.
//
// Note: steps are numbered the way people count them — `step` is the 1-based step in which
// the job ended. The stream counts from 0 (StepSummary::step, Failure::step); a rank that
// died after the stream's last complete step k (0-based) died in step k + 2.
#include "launch/progress.h"

#include <chrono>
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

namespace shardscope::launch {

enum class EndingKind {
    Completed,    // the stream ended with an End record and a report, and the job exited 0
    Failed,       // a rank failed: its Failure record, its stderr line, or mpirun's summary
    Stalled,      // no stream bytes for the stall timeout, or a collective timed out: torn down
                  // (`rank`: the rank whose progress stopped, where the records name one)
    Interrupted,  // this process got SIGINT / SIGTERM / SIGHUP: torn down
    Stopped,      // stop() was asked for: torn down
    InvalidInput, // the worker refused its configuration (exit code 2, no rank named)
    LaunchError,  // mpirun or the worker did not run, or ended without naming a rank or a report
    StreamError,  // the event stream could not be decoded
};

struct JobEnding {
    EndingKind kind = EndingKind::Completed;
    std::optional<int> rank; // the rank that ended the job, where one did
    std::optional<std::int64_t>
        step; // 1-based step in which it ended (a resumed run's counted on); none: setup / unknown
    std::string cause;               // what happened, in the source's words ("out of memory …")
    int signal = 0;                  // a rank (or this process, when Interrupted) got this signal
    int exitCode = 0;                // a rank's (or mpirun's) non-zero exit status
    std::int64_t completedSteps = 0; // steps the stream reported complete
    bool setup = false;              // a rank failed before its first step
};

// Everything the supervisor and the stream knew when the job ended. Stream facts are filled by
// whoever decodes the stream (the CLI decodes in the launcher, the GUI on its decoder thread).
struct JobEvidence {
    std::int64_t lastCompleteStep = -1; // 0-based StepSummary::step of the last step; -1: none
    std::int64_t stepsBefore = 0;       // a resumed run's checkpoint step (the handshake's)
    bool sawEnd = false;                // an End record arrived
    bool sawReport = false;             // a Report record arrived
    std::optional<int> failureRank;     // the first Failure record (-1: the launcher)
    std::int64_t failureStep = -1;      //   its 0-based step (-1: setup)
    std::string failureMessage;
    std::string streamError;  // non-empty: the stream could not be decoded
    std::string stderrText;   // mpirun's and the ranks' stderr
    int exitCode = 0;         // the child's status (128 + signal when signalled)
    bool exited = false;      // the child exited by itself (not torn down)
    bool direct = false;      // the child was the worker itself, not mpirun
    bool startFailed = false; // spawning failed; stderrText says why
    bool stalled = false;
    std::chrono::milliseconds stallTimeout{0};
    int interruptSignal = 0; // SIGINT / SIGTERM / SIGHUP received by this process
    bool stopRequested = false;
    bool hungAfterEnd = false;     // report and End arrived, then the job did not exit
    bool childStopped = false;     // at a stall the child (worker or mpirun) was stopped (SIGSTOP)
    std::vector<int> stoppedRanks; // ranks whose process was stopped (at a stall or a failure)
    int worldSize = 0;             // from the handshake (0: none arrived)
    std::vector<RankProgress> progress; // the ranks' progress records (progress.h)
    std::vector<std::string> unitNames; // from the handshake: unit index → name
};

// The one classifier (rules in order: stop, signal, stream error, a complete run, Failure
// record, stall, worker stderr line, mpirun's summary, the direct worker's status, mpirun's
// status, no report). A collective's timeout (in a Failure record or a stderr line) and a
// stall become Stalled naming the rank the progress records single out (findStuckRank): the
// rank that did not arrive, not the one that noticed. A run that delivered its report and End
// is Completed even when the job then had to be torn down.
JobEnding classify(const JobEvidence& evidence);
// "SIGINT", "SIGTERM", "SIGHUP", else "signal N": how endings and the worker name a signal.
std::string signalName(int signal);

// One English line: "rank 2 exited (signal 9) in step 3", "rank 1, step 2: out of memory …",
// "interrupted by SIGTERM in step 4: the job was torn down". Empty for Completed.
std::string describe(const JobEnding& ending);

std::string_view endingKindName(EndingKind kind);
std::optional<EndingKind> endingKindFromName(std::string_view name);

// The typed ending as JSON (`shardscope-cli run --ending FILE`, read by the GUI).
nlohmann::json toJson(const JobEnding& ending);
// Throws Error(Format) when `json` is not an ending.
JobEnding endingFromJson(const nlohmann::json& json);

// A worker's own stderr line "shardscope-worker: rank R, step S: message" (S from 1, or
// "setup"): the first one in `text`.
struct WorkerErrorLine {
    int rank = -1;
    std::optional<std::int64_t> step; // 1-based; none: setup
    std::string message;
};
std::optional<WorkerErrorLine> parseWorkerErrorLine(const std::string& text);

} // namespace shardscope::launch
