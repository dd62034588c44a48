// --shared-device: N ranks as threads of this process (no mpirun). Each thread has its own
// Ledger, Device, strategy and Trainer, and its communicators from shared groups (backends.h).
//
// Failures: a rank thread that throws records its error BEFORE it releases its communicators;
// releasing them breaks its groups, so peers waiting for it fail at once with "rank R left the
// group" errors, which are consequences, not causes. The main thread reports the first cause —
// one line, a Failure record on rank 0's stream — and exits 1. Nothing can hang: peers blocked
// in a collective fail when the group breaks or at the collective deadline, and if a thread is
// still busy long after that, the process ends without waiting for it.
#include "backends.h"
#include "core/error.h"
#include "jobs.h"
#include "plan/collective.h"
#include "rank.h"
#include "train/checkpointing.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>

namespace shardscope::worker {

namespace {

struct RankFailure {
    int rank = 0;
    std::int64_t step = -1;
    std::string message;
    bool consequence = false; // a peer left the group while this rank waited for it
    bool badInput = false;    // a damaged checkpoint to resume: one line, exit 2
};

// The barrier's wording when a peer's communicator went away (comm/shared_device_communicator.h).
bool isConsequence(const std::exception& e) {
    const auto* error = dynamic_cast<const Error*>(&e);
    return error && error->kind() == ErrorKind::Comm &&
           std::string(e.what()).find("left the group") != std::string::npos;
}

class Supervisor {
public:
    explicit Supervisor(int ranks) : running_(ranks) {}

    void failed(RankFailure f) {
        std::lock_guard lock(mutex_);
        if (failures_.empty()) firstFailure_ = std::chrono::steady_clock::now();
        failures_.push_back(std::move(f));
    }
    void finished(int rank) {
        std::lock_guard lock(mutex_);
        --running_;
        if (rank == 0) rankZeroDone_ = true;
        cv_.notify_all();
    }

    // Waits for every rank thread; after a failure, at most `grace` for the rest. Returns false
    // when some thread did not finish in time.
    bool waitAll(std::chrono::milliseconds grace) {
        std::unique_lock lock(mutex_);
        while (running_ > 0) {
            if (failures_.empty()) {
                cv_.wait(lock);
            } else if (cv_.wait_until(lock, firstFailure_ + grace) == std::cv_status::timeout &&
                       running_ > 0) {
                return false;
            }
        }
        return true;
    }

    // The cause: the first failure that is not a consequence of another rank leaving.
    std::optional<RankFailure> cause() const {
        std::lock_guard lock(mutex_);
        for (const RankFailure& f : failures_)
            if (!f.consequence) return f;
        if (!failures_.empty()) return failures_.front();
        return std::nullopt;
    }
    bool rankZeroDone() const {
        std::lock_guard lock(mutex_);
        return rankZeroDone_;
    }

private:
    mutable std::mutex mutex_;
    std::condition_variable cv_;
    int running_;
    bool rankZeroDone_ = false;
    std::vector<RankFailure> failures_;
    std::chrono::steady_clock::time_point firstFailure_;
};

void writeFailure(StreamWriter& writer, const RankFailure& f) {
    if (!writer.active()) return;
    try {
        writer.write(protocol::Failure{f.rank, f.step, f.message});
        writer.write(protocol::End{});
        writer.finish();
    } catch (...) {
        // The line on stderr already said what went wrong; no half-written recording stays.
        writer.discard();
    }
}

} // namespace

int runSharedJob(const train::RunConfig& config) {
    const int n = config.worldSize;
    // Teardown runs in reverse: communicators (per thread), devices, then their ledgers.
    std::vector<std::unique_ptr<Ledger>> ledgers;
    std::vector<std::unique_ptr<device::Device>> devices;
    StreamWriter writer;
    std::vector<RankComms> comms;
    int settingUp = 0;
    try {
        if (config.streamPath) writer.connectSocket(*config.streamPath);
        if (config.tracePath) writer.openRecording(*config.tracePath);
        std::vector<device::Device*> raw;
        for (settingUp = 0; settingUp < n; ++settingUp) {
            ledgers.push_back(std::make_unique<Ledger>(settingUp));
            devices.push_back(makeSharedRankDevice(config, *ledgers.back()));
            raw.push_back(devices.back().get());
        }
        settingUp = 0;
        comms = makeSharedComms(config, raw);
    } catch (const std::exception& e) {
        const RankFailure f{settingUp, -1, describeFailure(e), false};
        printRankFailure(f.rank, f.step, config, f.message);
        writeFailure(writer, f);
        return 1;
    }

    Supervisor supervisor(n);
    std::atomic<int> interruptedBy{0};
    std::vector<std::thread> threads;
    for (int r = 0; r < n; ++r) {
        auto body = [&, r] {
            RankComms mine = std::move(comms[static_cast<std::size_t>(r)]);
            try {
                runRank(config, *devices[static_cast<std::size_t>(r)], mine.groups,
                        r == 0 ? &writer : nullptr);
            } catch (const comm::CollectiveTimeout& e) {
                // The rank that did not arrive (a world rank) is the cause, not this one that
                // waited for it; a pipeline receive waited for its neighbour's send.
                const std::int64_t step = ledgers[static_cast<std::size_t>(r)]->step();
                const bool message = e.collective() == plan::displayText(CollectiveOp::PipeRecv) ||
                                     e.collective() == plan::displayText(CollectiveOp::PipeSend);
                if (!e.missing().empty())
                    supervisor.failed(
                        {e.missing().front(), step,
                         "it did not arrive at the " +
                             (message
                                  ? "pipeline message to rank " + std::to_string(r) +
                                        ", which waited " + std::to_string(config.timeoutMs) + " ms"
                                  : e.collective() + " (rank " + std::to_string(r) + " waited " +
                                        std::to_string(config.timeoutMs) + " ms)"),
                         false});
                else
                    supervisor.failed({r, step, e.what(), false});
            } catch (const Interrupted& e) {
                supervisor.failed(
                    {-1, ledgers[static_cast<std::size_t>(r)]->step(), e.what(), false});
                interruptedBy = e.signal();
            } catch (const train::CheckpointError& e) {
                // Rank 0 reports it for the rank whose file or disk failed.
                supervisor.failed({e.rank(), ledgers[static_cast<std::size_t>(r)]->step(), e.what(),
                                   false, e.badInput()});
            } catch (const std::exception& e) {
                supervisor.failed({r, ledgers[static_cast<std::size_t>(r)]->step(),
                                   describeFailure(e), isConsequence(e)});
            } catch (...) {
                supervisor.failed(
                    {r, ledgers[static_cast<std::size_t>(r)]->step(), "unknown exception", false});
            }
            mine.owned.clear(); // leave every group now (breaks it for peers if this rank failed)
            supervisor.finished(r);
        };
        try {
            threads.emplace_back(body);
        } catch (const std::system_error& e) {
            // The ranks that could not start leave their groups, so the started ones stop too.
            supervisor.failed(
                {r, -1, std::string("cannot start the rank's thread: ") + e.what(), false});
            for (int q = r; q < n; ++q) {
                comms[static_cast<std::size_t>(q)].owned.clear();
                supervisor.finished(q);
            }
            break;
        }
    }
    // Peers of a failed rank fail when they reach a broken group, at the latest at the collective
    // deadline; a thread still running well after that is stuck outside any collective.
    const bool allDone =
        supervisor.waitAll(std::chrono::milliseconds(config.timeoutMs) + std::chrono::seconds(5));
    const std::optional<RankFailure> cause = supervisor.cause();
    if (!allDone) {
        printRankFailure(cause->rank, cause->step, config,
                         cause->message + " (a rank thread did not stop; ending the process)");
        // Rank 0's thread may still use the stream: write the Failure record only if it is done.
        if (supervisor.rankZeroDone()) writeFailure(writer, *cause);
        std::_Exit(1); // the stuck thread cannot be joined or cancelled
    }
    for (std::thread& t : threads)
        t.join();
    if (!cause) return 0;
    if (cause->rank < 0 && interruptedBy != 0) { // every rank stopped at the same boundary
        std::fprintf(stderr, "shardscope-worker: %s\n", cause->message.c_str());
        writeFailure(writer, *cause);
        return 128 + interruptedBy;
    }
    if (cause->badInput) {
        std::fprintf(stderr, "shardscope-worker: %s\n", cause->message.c_str());
        writeFailure(writer, *cause);
        return 2;
    }
    printRankFailure(cause->rank, cause->step, config, cause->message);
    writeFailure(writer, *cause);
    return 1;
}

} // namespace shardscope::worker
