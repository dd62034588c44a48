#include "rank.h"

#include "backends.h"
#include "core/error.h"
#include "core/ledger.h"
#include "core/step_number.h"
#include "kernels/cpu/gemm.h"
#include "launch/ending.h"
#include "predict/predict.h"
#include "protocol/protocol.h"
#include "train/checkpointing.h"
#include "train/overlap.h"
#include "train/report.h"
#include "train/trainer.h"

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <new>
#include <utility>

namespace shardscope::worker {

namespace {

// What the rank's ledger emits: every event for the stream (unless --no-events) and the spans
// for the exposed-communication figures (always).
struct RankEvents {
    bool ship = true;
    std::vector<Event> pending;
    train::OverlapTracker overlap;
    void onEvent(const Event& e) {
        overlap.onEvent(e);
        if (ship) pending.push_back(e);
    }
};

// The sink captures a RankEvents on runRank's stack: clear it when runRank ends, whichever way,
// after the trainer and the strategy have freed their buffers (declared after this guard).
class SinkGuard {
public:
    explicit SinkGuard(Ledger& ledger, RankEvents& events) : ledger_(ledger) {
        ledger_.setSink([&events](const Event& e) { events.onEvent(e); });
    }
    ~SinkGuard() { ledger_.setSink({}); }
    SinkGuard(const SinkGuard&) = delete;
    SinkGuard& operator=(const SinkGuard&) = delete;

private:
    Ledger& ledger_;
};

// Every rank's events since the last call, to rank 0's stream.
void shipEvents(RankEvents& events, comm::Communicator& world, StreamWriter* writer) {
    protocol::EventBatch batch{world.rank(), std::move(events.pending)};
    events.pending.clear();
    const std::vector<std::string> parts = world.gatherBytes(protocol::encode(batch), 0);
    if (!writer || !writer->active()) return;
    for (const std::string& part : parts)
        writer->writeEncoded(part);
}

// A step that failed on this rank (out of memory, a peer gone): its events up to the failure,
// and the frees that unwound it, go into rank 0's recording before the Failure record, so the
// replay shows the ledger at the moment the allocation did not fit. Rank 0's own only: a peer that
// failed stops without shipping its batch. Best effort: the failure itself is what is reported.
void keepFailedStepsEvents(RankEvents& events, int rank, StreamWriter* writer) noexcept {
    if (!writer || !writer->active() || events.pending.empty()) return;
    try {
        writer->writeEncoded(
            protocol::encode(protocol::EventBatch{rank, std::move(events.pending)}));
    } catch (...) {
    }
    events.pending.clear();
}

} // namespace

namespace {

// Note: the handler only sets a flag the ranks read at their step boundaries (agreed over the
// world group, so that every rank stops at the same step); a second signal restores the default
// action and re-raises it.
std::atomic<int> gInterrupt{0};
std::atomic<bool> gWatching{false};
constexpr int kInterrupting[] = {SIGINT, SIGTERM, SIGHUP};

extern "C" void noteInterrupt(int signal) {
    if (gInterrupt.exchange(signal) != 0) {
        ::signal(signal, SIG_DFL);
        ::raise(signal);
    }
}

// The signal every rank agrees it was interrupted by (0: none); a collective only while watching.
int agreedInterrupt(comm::Communicator& world) {
    if (!gWatching.load(std::memory_order_relaxed)) return 0;
    return static_cast<int>(world.maxScalar(static_cast<double>(gInterrupt.load())));
}

} // namespace

void watchInterrupts() {
    struct sigaction action {};
    action.sa_handler = noteInterrupt;
    ::sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART; // waits in MPI, futexes and io_uring go on until the boundary
    for (const int s : kInterrupting) {
        struct sigaction previous {};
        ::sigaction(s, nullptr, &previous);
        if (previous.sa_handler != SIG_IGN) ::sigaction(s, &action, nullptr);
    }
    gWatching = true;
}

Interrupted::Interrupted(int signal, std::int64_t stepsDone)
    : std::runtime_error("interrupted by " + launch::signalName(signal) + " after step " +
                         std::to_string(stepsDone)),
      signal_(signal) {}

void configureComms(RankComms& comms, const train::RunConfig& config) {
    for (comm::Communicator* c : comms.groups.distinct()) {
        c->setDeterministic(config.deterministic);
        c->setTimeout(std::chrono::milliseconds(config.timeoutMs));
    }
}

void runRank(const train::RunConfig& cfg, device::Device& device,
             const strategy::CommGroups& groups, StreamWriter* writer) {
    Ledger& ledger = device.ledger();
    ledger.setCapacity(Tier::Device, cfg.capacityBytes);
    comm::Communicator& world = *groups.world;
    const int rank = world.rank(), size = world.size();
    RankEvents events;
    events.ship = cfg.events;
    const SinkGuard sinkGuard(ledger, events);

    // Rank 0 writes the handshake and the report: the predicted peak is its dry run of one step,
    // made once, before this rank's own states exist.
    theory::PeakPrediction predicted;
    std::vector<theory::PeakPrediction> stagePredicted;
    if (rank == 0) {
        predicted = predict::predictPeak(train::scenarioOf(cfg));
        for (int s = 0; cfg.pipeParallel > 1 && s < cfg.pipeParallel; ++s)
            stagePredicted.push_back(s == 0 ? predicted
                                            : predict::predictPeak(train::scenarioOf(cfg, s)));
    }

    const std::unique_ptr<model::DataSource> data = train::makeDataSource(cfg);
    const std::unique_ptr<strategy::Sharding> sharding = strategy::makeSharding(
        train::strategyConfigOf(cfg, groups.pipe ? groups.pipe->rank() : 0), device, groups);
    train::Trainer trainer(train::trainConfigOf(cfg), device, *data, sharding.get());

    // Handshakes (one per rank, rank 0 first), then the states' allocations (step −1).
    if (writer) {
        const std::string configJson =
            train::handshakeJson(cfg, trainer.model().units(), predicted.peakBytes, stagePredicted)
                .dump();
        for (int r = 0; r < size; ++r)
            writer->write(protocol::Handshake{r, size, configJson});
    }
    shipEvents(events, world, writer);

    train::RunOutcome outcome;
    std::uint64_t checkpointBytesRead = 0;
    outcome.config = cfg;
    outcome.paramCount = trainer.paramCount();
    if (cfg.backend == runconfig::Backend::Cpu) outcome.gemmEngine = kernels::gemmEngine();
    outcome.predicted = predicted;
    outcome.stagePredicted = std::move(stagePredicted);
    if (cfg.resumePath) {
        const train::ResumeResult resumed = train::resumeCheckpoint(trainer, cfg, *cfg.resumePath);
        outcome.resumedFrom = resumed.from;
        checkpointBytesRead = resumed.stats.bytesRead;
        // Deriving the working parameters may all-gather (ZeRO-1/2): not a training step's traffic.
        for (comm::Communicator* c : groups.distinct())
            c->resetStats();
        shipEvents(events, world, writer);
    }
    ByteTable modelStates;
    train::CheckpointSaver saver(trainer, cfg);
    for (std::int64_t k = 0; k < cfg.steps; ++k) {
        if (const int signal = agreedInterrupt(world)) {
            saver.finish(); // a save still being written completes: its step is done
            throw Interrupted(signal, cfg.stepsBefore + k); // steps done, counted on
        }
        train::StepResult r;
        try {
            r = trainer.step();
        } catch (...) {
            keepFailedStepsEvents(events, rank, writer);
            throw;
        }
        if (k == 0) modelStates = r.modelStates;
        outcome.losses.push_back(r.loss);
        outcome.stepMs.push_back(static_cast<double>(r.stepNs) / 1e6);
        // A save belongs to the step it follows: its spans travel in that step's events.
        const bool last = k + 1 == cfg.steps;
        if (cfg.saveDir && (last || (cfg.saveEvery > 0 && (k + 1) % cfg.saveEvery == 0)))
            saver.save();
        shipEvents(events, world, writer);
        if (writer && writer->active()) {
            writer->write(protocol::StepSummary{r.step, r.loss, r.stepNs});
            writer->flush();
        }
    }
    ledger.setStep(cfg.steps);
    // --steps 0 converts: the loaded state saved in this run's layout.
    if (cfg.saveDir && cfg.steps == 0) saver.save();
    // An asynchronous save still writing is committed before the run ends.
    saver.finish();
    outcome.saves = saver.records();

    // Final weights (instrumentation traffic: not in the per-step communication).
    const std::vector<std::vector<float>> weights = trainer.fullWeights();
    train::RankResult mine;
    mine.rank = rank;
    mine.peak = ledger.peak();
    mine.peakTotal = ledger.peakBytes();
    for (Tier t : kAllTiers)
        mine.tierPeaks[index(t)] = ledger.peakTierBytes(t);
    mine.modelStates = modelStates;
    for (comm::Communicator* c : groups.distinct())
        mine.comm.add(c->stats());
    mine.overlap = events.overlap.steps();
    mine.device = measureDevice(device);
    mine.checkpointBytesRead = checkpointBytesRead;
    const std::vector<std::string> results = world.gatherBytes(train::encodeRankResult(mine), 0);
    if (rank != 0) return;

    outcome.digest = train::fnv1a(weights);
    for (const std::string& r : results)
        outcome.ranks.push_back(train::decodeRankResult(r));
    const std::string report = train::buildReport(outcome).dump(2) + "\n";
    if (cfg.weightsPath) train::writeWeightsFile(*cfg.weightsPath, weights);
    if (cfg.jsonPath) train::writeTextFile(*cfg.jsonPath, report, "--json");
    if (writer && writer->active()) {
        writer->write(protocol::Report{report});
        writer->write(protocol::End{});
        writer->finish();
    }
}

std::string describeFailure(const std::exception& e) {
    if (dynamic_cast<const std::bad_alloc*>(&e))
        return "out of host memory: this process could not allocate memory for the rank's model, "
               "optimizer "
               "states, activations or buffers (std::bad_alloc); try a smaller --model or "
               "--micro-batch, or "
               "fewer ranks on this machine";
    return e.what();
}

void printRankFailure(int rank, std::int64_t ledgerStep, const train::RunConfig& config,
                      const std::string& message) {
    // Steps are counted from 1 for people, a resumed run's after its checkpoint's (the progress
    // lines do the same); -1 is setup, and the ledger's step after the last one is the final
    // weights and the report.
    const std::int64_t steps = config.steps, before = config.stepsBefore;
    const std::string when = ledgerStep < 0 ? "setup"
                             : ledgerStep >= steps
                                 ? "after step " + std::to_string(displayStep(steps - 1, before))
                                 : "step " + std::to_string(displayStep(ledgerStep, before));
    std::fprintf(stderr, "shardscope-worker: rank %d, %s: %s\n", rank, when.c_str(),
                 message.c_str());
    std::fflush(stderr);
}

} // namespace shardscope::worker
