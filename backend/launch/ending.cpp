#include "launch/ending.h"

#include "core/error.h"
#include "core/step_number.h"
#include "launch/mpirun.h"

#include <algorithm>
#include <csignal>
#include <cstring>
#include <nlohmann/json.hpp>
#include <regex>

namespace shardscope::launch {
namespace {

constexpr std::string_view kWorkerTag = "shardscope-worker: ";

std::string lastLine(const std::string& text) {
    const std::size_t end = text.find_last_not_of(" \n\r\t-");
    if (end == std::string::npos) return {};
    const std::size_t newline = text.rfind('\n', end);
    const std::size_t begin = newline == std::string::npos ? 0 : newline + 1;
    return text.substr(begin, end + 1 - begin);
}

// The step the job was in when a rank died without saying so itself.
// Steps as people count them, a resumed run's after its checkpoint's (core/step_number.h).
std::int64_t counted(const JobEvidence& e, std::int64_t streamStep) {
    return displayStep(streamStep, e.stepsBefore);
}

std::int64_t runningStep(const JobEvidence& e) {
    return counted(e, e.lastCompleteStep + 1);
}

constexpr std::string_view kDidNotArrive = "it did not arrive at ";

bool isTimeout(const std::string& message) {
    return message.find("timed out") != std::string::npos;
}

// "the all-gather of block1": what the stuck rank's peers wait in.
std::string collectiveOf(const StuckRank& s, const std::vector<std::string>& units) {
    std::string out = "the " + (s.what.empty() ? std::string("collective") : s.what);
    if (s.unit >= 0) {
        const auto u = static_cast<std::size_t>(s.unit);
        out += " of " + (u < units.size() && !units[u].empty() ? units[u]
                                                               : "unit " + std::to_string(s.unit));
    }
    return out;
}

// A rank whose process is stopped (SIGSTOP) while a peer's collective times out is the stuck one,
// whatever the heartbeats say: on a loaded machine a waiting rank's last heartbeat can be as old
// as the stopped one's.
std::optional<JobEnding> stoppedEnding(const JobEvidence& e, int failingRank) {
    for (const int r : e.stoppedRanks) {
        if (r == failingRank) continue;
        JobEnding out;
        out.kind = EndingKind::Stalled;
        out.completedSteps = e.lastCompleteStep + 1;
        out.rank = r;
        out.step = runningStep(e);
        for (const RankProgress& p : e.progress) {
            if (p.rank != r) continue;
            if (p.step >= 0) {
                out.step = counted(e, p.step);
            } else { // stopped before its first step
                out.step.reset();
                out.setup = true;
            }
        }
        out.cause = "its process is stopped (SIGSTOP)";
        return out;
    }
    return std::nullopt;
}

// The rank the progress records single out, as a Stalled ending; none when they do not.
std::optional<JobEnding> stuckEnding(const JobEvidence& e) {
    // A stuck rank has been silent for about the stall timeout (or the collective's deadline);
    // the waiting ones beat many times a second.
    const auto half = std::chrono::nanoseconds(e.stallTimeout) / 2;
    const auto silent = std::clamp<std::chrono::nanoseconds>(half, std::chrono::milliseconds(200),
                                                             std::chrono::seconds(2));
    const auto stuck = findStuckRank(e.progress, static_cast<std::uint64_t>(silent.count()));
    if (!stuck) return std::nullopt;
    JobEnding out;
    out.kind = EndingKind::Stalled;
    out.completedSteps = e.lastCompleteStep + 1;
    out.rank = stuck->rank;
    if (stuck->step >= 0)
        out.step = counted(e, stuck->step);
    else
        out.setup = true;
    out.cause = (stuck->arrived ? std::string("it stopped inside ") : std::string(kDidNotArrive)) +
                collectiveOf(*stuck, e.unitNames);
    if (!stuck->alsoStuck.empty()) {
        std::string others;
        for (int r : stuck->alsoStuck)
            others += (others.empty() ? "" : ", ") + std::to_string(r);
        out.cause +=
            " (nor did rank" + std::string(stuck->alsoStuck.size() > 1 ? "s " : " ") + others + ")";
    }
    return out;
}

} // namespace

std::optional<WorkerErrorLine> parseWorkerErrorLine(const std::string& text) {
    for (std::size_t at = text.find(kWorkerTag); at != std::string::npos;
         at = text.find(kWorkerTag, at + 1)) {
        if (at > 0 && text[at - 1] != '\n') continue; // only at the start of a line
        const std::size_t begin = at + kWorkerTag.size();
        const std::size_t end = text.find('\n', begin);
        const std::string line =
            text.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
        static const std::regex ranked(
            R"(^rank (\d+), (setup|step (\d+)|after step (\d+)): (.*)$)");
        std::smatch m;
        WorkerErrorLine out;
        if (std::regex_match(line, m, ranked)) {
            out.rank = std::stoi(m[1]);
            if (m[3].matched)
                out.step = std::stoll(m[3]);
            else if (m[4].matched)
                out.step = std::stoll(m[4]) + 1; // writing the report after the last step
            out.message = m[5];
        } else {
            out.message = line; // the worker refused its configuration (rank 0 says why)
        }
        return out;
    }
    return std::nullopt;
}

std::string signalName(int signal) {
    switch (signal) {
    case SIGINT:
        return "SIGINT";
    case SIGTERM:
        return "SIGTERM";
    case SIGHUP:
        return "SIGHUP";
    default:
        return "signal " + std::to_string(signal);
    }
}

JobEnding classify(const JobEvidence& e) {
    JobEnding out;
    out.completedSteps = e.lastCompleteStep + 1;
    auto atRunningStep = [&](JobEnding& r) { r.step = runningStep(e); };

    if (e.stopRequested) {
        out.kind = EndingKind::Stopped;
        out.cause = "stopped";
        atRunningStep(out);
        return out;
    }
    if (e.interruptSignal != 0) {
        out.kind = EndingKind::Interrupted;
        out.signal = e.interruptSignal;
        out.cause = "interrupted by " + signalName(e.interruptSignal);
        atRunningStep(out);
        return out;
    }
    if (!e.streamError.empty()) {
        out.kind = EndingKind::StreamError;
        out.cause = e.streamError;
        return out;
    }
    if (e.sawEnd && e.sawReport && !e.failureRank && (e.hungAfterEnd || e.stalled))
        return out; // Completed: everything the run produces has arrived
    if (e.failureRank && isTimeout(e.failureMessage)) {
        if (auto stopped = stoppedEnding(e, *e.failureRank)) return *stopped;
        if (auto stuck = stuckEnding(e); stuck && stuck->rank != *e.failureRank) return *stuck;
    }
    if (e.failureRank && *e.failureRank >= 0 && e.failureMessage.starts_with(kDidNotArrive)) {
        // Rank threads name the rank that did not arrive themselves.
        out.kind = EndingKind::Stalled;
        out.rank = *e.failureRank;
        if (e.failureStep >= 0)
            out.step = counted(e, e.failureStep);
        else
            out.setup = true;
        out.cause = e.failureMessage;
        return out;
    }
    if (e.failureRank) { // the worker said it itself
        out.kind = EndingKind::Failed;
        if (*e.failureRank >= 0) out.rank = *e.failureRank;
        if (e.failureStep >= 0)
            out.step = counted(e, e.failureStep);
        else
            out.setup = true;
        out.cause = e.failureMessage;
        return out;
    }
    if (e.startFailed) {
        out.kind = EndingKind::LaunchError;
        out.cause = lastLine(e.stderrText);
        return out;
    }
    if (e.stalled) {
        // A stopped process outweighs the progress records here too: the stream's writer (rank
        // 0) may be the stopped one, its peers' timeouts then unheard, and ranks that call
        // different collectives (pipeline stages) cannot be told apart by how many they entered.
        const std::optional<JobEnding> stuck = stuckEnding(e);
        const bool agrees = stuck && stuck->rank &&
                            std::find(e.stoppedRanks.begin(), e.stoppedRanks.end(), *stuck->rank) !=
                                e.stoppedRanks.end();
        if (stuck && (e.stoppedRanks.empty() || agrees)) return *stuck; // says where it stopped
        if (auto stopped = stoppedEnding(e, -1)) return *stopped;
        if (stuck) return *stuck;
        if (e.childStopped && !e.direct) {
            out.kind = EndingKind::Stalled;
            atRunningStep(out);
            out.cause = "no progress for " + std::to_string(e.stallTimeout.count() / 1000) +
                        " s: mpirun is stopped (SIGSTOP)";
            return out;
        }
        if (e.childStopped) { // the one worker process holds every rank: all of them are stuck
            out.kind = EndingKind::Stalled;
            if (e.worldSize <= 1) out.rank = 0;
            atRunningStep(out);
            out.cause =
                e.worldSize > 1
                    ? "no progress for " + std::to_string(e.stallTimeout.count() / 1000) +
                          " s: the worker process holding every rank thread is stopped (SIGSTOP)"
                    : "its process is stopped (SIGSTOP)";
            return out;
        }
        out.kind = EndingKind::Stalled;
        out.cause = "no progress for " + std::to_string(e.stallTimeout.count() / 1000) +
                    " s: a rank is stuck";
        atRunningStep(out);
        return out;
    }
    // Every rank's process ended on SIGTERM / SIGINT / SIGHUP that this supervisor did not send
    // (it sends them only after a stop, a signal to itself or a stall, all classified above):
    // the job was ended from outside — a scheduler's SIGTERM to mpirun, which passes it on.
    // (When mpirun names a rank that exited on a signal, that rank was signalled alone: below.)
    if (e.exited && !e.direct && !e.progress.empty() && !(e.sawEnd && e.sawReport) &&
        !parseMpirunFailure(e.stderrText) && mpirunMessage(e.stderrText).empty() &&
        std::all_of(e.progress.begin(), e.progress.end(),
                    [](const RankProgress& p) { return p.signal > 0; })) {
        out.kind = EndingKind::Interrupted;
        out.signal = e.progress.front().signal;
        out.cause = "terminated by " + signalName(out.signal) + " from outside (sent to mpirun)";
        atRunningStep(out);
        return out;
    }
    if (const auto line = parseWorkerErrorLine(e.stderrText); line && line->rank >= 0) {
        if (isTimeout(line->message)) {
            if (auto stopped = stoppedEnding(e, line->rank)) return *stopped;
            if (auto stuck = stuckEnding(e); stuck && stuck->rank != line->rank) return *stuck;
        }
        out.kind = EndingKind::Failed;
        out.rank = line->rank;
        out.step = line->step;
        out.setup = !line->step;
        out.cause = line->message;
        return out;
    }
    std::optional<RankExit> exit = parseMpirunFailure(e.stderrText);
    if (!exit && e.direct && e.exitCode > 128 && e.worldSize > 1) {
        // Rank threads: the process that held them all is gone, no rank in particular.
        out.kind = EndingKind::Failed;
        out.signal = e.exitCode - 128;
        out.cause = "the worker process with every rank thread exited (signal " +
                    std::to_string(out.signal) + ")";
        atRunningStep(out);
        return out;
    }
    if (!exit && e.direct && e.exitCode != 0 && (e.exitCode > 128 || e.exitCode != 2)) {
        // Without mpirun nobody names the rank: the worker is rank 0, its status says how it ended.
        exit =
            RankExit{0, e.exitCode > 128 ? e.exitCode - 128 : 0, e.exitCode > 128 ? 0 : e.exitCode};
    }
    if (exit) {
        out.kind = EndingKind::Failed;
        out.rank = exit->rank;
        out.signal = exit->signal;
        out.exitCode = exit->exitCode;
        out.cause = exit->signal > 0 ? "exited (signal " + std::to_string(exit->signal) + ")"
                                     : "exited (exit code " + std::to_string(exit->exitCode) + ")";
        atRunningStep(out);
        return out;
    }
    if (e.exitCode == 2) {
        out.kind = EndingKind::InvalidInput;
        out.exitCode = 2;
        const auto line = parseWorkerErrorLine(e.stderrText);
        out.cause = line ? line->message : lastLine(e.stderrText);
        return out;
    }
    if (e.exitCode > 128 && e.exited && !e.direct) { // mpirun itself was killed
        out.kind = EndingKind::LaunchError;
        out.signal = e.exitCode - 128;
        out.cause = "mpirun was killed (signal " + std::to_string(out.signal) + ")";
        atRunningStep(out);
        return out;
    }
    if (e.exitCode != 0) {
        out.kind = EndingKind::LaunchError;
        out.exitCode = e.exitCode;
        out.cause = e.direct ? lastLine(e.stderrText) : mpirunMessage(e.stderrText);
        // mpirun ending without a word and without a rank's: what a signal from outside does to
        // it when the ranks' notes did not all survive (they died by SIGKILL after it) — in a
        // step, or before the first one completed (its ranks still starting).
        if (!e.direct && out.cause.empty()) {
            out.cause = "it ended without a message, as it does on a signal from outside (a "
                        "scheduler's SIGTERM)";
            if (e.sawEnd)
                out.cause.insert(0, "after the job's last record (" +
                                        std::to_string(e.lastCompleteStep + 1) + " steps done): ");
            else if (e.lastCompleteStep >= 0)
                atRunningStep(out);
            else
                out.cause.insert(0, "before the first step completed: ");
        }
        return out;
    }
    if (!e.sawEnd || !e.sawReport) {
        out.kind = EndingKind::LaunchError;
        out.cause = "the job ended without a report";
        return out;
    }
    return out; // Completed
}

std::string describe(const JobEnding& e) {
    const std::string where = e.step ? " in step " + std::to_string(*e.step) : std::string();
    switch (e.kind) {
    case EndingKind::Completed:
        return {};
    case EndingKind::Failed: {
        if (!e.rank && e.signal > 0) return e.cause + where;
        if (!e.rank) return "the launcher failed" + where + ": " + e.cause;
        const std::string rank = "rank " + std::to_string(*e.rank);
        if (e.signal > 0 || e.exitCode != 0) return rank + " " + e.cause + where;
        return rank + ", " + (e.step ? "step " + std::to_string(*e.step) : std::string("setup")) +
               ": " + e.cause;
    }
    case EndingKind::Stalled:
        if (e.rank)
            return "rank " + std::to_string(*e.rank) + " is stuck " +
                   (e.step ? "in step " + std::to_string(*e.step) : std::string("during setup")) +
                   ": " + e.cause + "; the job was torn down";
        return e.cause + where + "; the job was torn down";
    case EndingKind::Interrupted:
    case EndingKind::Stopped:
        return e.cause + where + ": the job was torn down";
    case EndingKind::InvalidInput:
        return e.cause;
    case EndingKind::LaunchError:
        if (e.signal > 0) return e.cause + where + "; the job was torn down";
        if (e.exitCode != 0)
            return "mpirun exited with code " + std::to_string(e.exitCode) +
                   (e.step ? " in step " + std::to_string(*e.step) : std::string()) +
                   (e.cause.empty() ? "" : ": " + e.cause);
        return e.cause;
    case EndingKind::StreamError:
        return "the event stream could not be read: " + e.cause;
    }
    return e.cause;
}

namespace {
constexpr std::pair<EndingKind, std::string_view> kKindNames[] = {
    {EndingKind::Completed, "completed"},      {EndingKind::Failed, "failed"},
    {EndingKind::Stalled, "stalled"},          {EndingKind::Interrupted, "interrupted"},
    {EndingKind::Stopped, "stopped"},          {EndingKind::InvalidInput, "invalid_input"},
    {EndingKind::LaunchError, "launch_error"}, {EndingKind::StreamError, "stream_error"},
};
static_assert(std::size(kKindNames) == static_cast<std::size_t>(EndingKind::StreamError) + 1);
} // namespace

std::string_view endingKindName(EndingKind kind) {
    for (const auto& [k, name] : kKindNames)
        if (k == kind) return name;
    return "unknown";
}

std::optional<EndingKind> endingKindFromName(std::string_view name) {
    for (const auto& [k, n] : kKindNames)
        if (n == name) return k;
    return std::nullopt;
}

nlohmann::json toJson(const JobEnding& e) {
    nlohmann::json j{{"kind", endingKindName(e.kind)},
                     {"cause", e.cause},
                     {"completed_steps", e.completedSteps}};
    j["rank"] = e.rank ? nlohmann::json(*e.rank) : nlohmann::json(nullptr);
    j["step"] = e.step ? nlohmann::json(*e.step) : nlohmann::json(nullptr);
    if (e.signal) j["signal"] = e.signal;
    if (e.exitCode) j["exit_code"] = e.exitCode;
    if (e.setup) j["setup"] = true;
    return j;
}

JobEnding endingFromJson(const nlohmann::json& j) {
    try {
        JobEnding e;
        const auto kind = endingKindFromName(j.at("kind").get<std::string>());
        if (!kind)
            throw Error(ErrorKind::Format,
                        "unknown job ending kind '" + j.at("kind").get<std::string>() + "'");
        e.kind = *kind;
        e.cause = j.at("cause").get<std::string>();
        e.completedSteps = j.value("completed_steps", std::int64_t{0});
        if (j.contains("rank") && !j["rank"].is_null()) e.rank = j["rank"].get<int>();
        if (j.contains("step") && !j["step"].is_null()) e.step = j["step"].get<std::int64_t>();
        e.signal = j.value("signal", 0);
        e.exitCode = j.value("exit_code", 0);
        e.setup = j.value("setup", false);
        return e;
    } catch (const nlohmann::json::exception& x) {
        throw Error(ErrorKind::Format, std::string("not a job ending: ") + x.what());
    }
}

} // namespace shardscope::launch
