// shardscope-worker: one rank of a training job under mpirun. Parses the run configuration,
// trains with the chosen strategy, and batches each step's events to rank 0, which writes the
// stream (the parent's socket) and/or the recording, then the report.
//
// Errors: a bad configuration is one line "shardscope-worker: <message>" (rank 0) and exit 2 on
// every rank; an error inside a rank (out of memory against --capacity, a collective timeout,
// anything) is one line "shardscope-worker: rank R, step S: <message>" (S from 1, or "setup")
// from that rank, a Failure
// record when rank 0 knows, and MPI_Abort so the whole job ends.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "comm/mpi_communicator.h"
#include "core/error.h"
#include "core/ledger.h"
#include "core/protocol.h"
#include "core/stream_writer.h"
#include "device/device.h"
#include "kernels/cpu/gemm.h"
#include "strategy/sharding.h"
#include "train/report.h"
#include "train/run_config.h"
#include "train/trainer.h"

using namespace shardscope;

namespace {

// Records encoded on a rank, decoded at rank 0 (the codec is the one parser of the format).
protocol::Record decodeOne(const std::string& encoded) {
    std::string stream;
    protocol::writeHeader(stream);
    stream += encoded;
    protocol::StreamDecoder decoder;
    decoder.feed(stream);
    auto record = decoder.next();
    if (!record) throw Error(ErrorKind::Internal, "an event batch did not decode");
    return std::move(*record);
}

struct Job {
    train::RunConfig config;
    int rank = 0;
    int size = 1;
    Ledger* ledger = nullptr;
    std::vector<Event> events;
    StreamWriter writer;
    comm::Communicator* world = nullptr;

    // Every rank's events since the last call, to rank 0's stream.
    void shipEvents() {
        protocol::EventBatch batch{rank, std::move(events)};
        events.clear();
        if (!config.events) batch.events.clear();
        const std::vector<std::string> parts = world->gatherBytes(protocol::encode(batch), 0);
        if (rank != 0 || !writer.active()) return;
        for (const std::string& part : parts) writer.write(decodeOne(part));
    }
};

int run(Job& job) {
    const train::RunConfig& cfg = job.config;
    device::CpuDevice cpu(*job.ledger);
    if (cfg.events) job.ledger->setSink([&job](const Event& e) { job.events.push_back(e); });

    // A build without MPI still runs one rank (mpirun is then not involved).
    std::unique_ptr<comm::Communicator> world =
        comm::mpiCompiledIn() ? comm::makeMpiWorldCommunicator(&cpu) : comm::makeSelfCommunicator(&cpu);
    std::unique_ptr<comm::Communicator> shardGroup, replicaGroup;
    strategy::CommGroups groups{world.get(), world.get(), nullptr};
    if (cfg.strategy == theory::Strategy::FsdpHybridShard) {
        const int g = cfg.knobs.hybridGroupSize;
        // Shard groups are consecutive ranks [k·G, (k+1)·G); replicas hold the same shard index.
        const bool mpi = comm::mpiCompiledIn();
        shardGroup = mpi ? comm::makeMpiSplitCommunicator(&cpu, job.rank / g, job.rank) : comm::makeSelfCommunicator(&cpu);
        replicaGroup = mpi ? comm::makeMpiSplitCommunicator(&cpu, job.rank % g, job.rank) : comm::makeSelfCommunicator(&cpu);
        groups.shard = shardGroup.get();
        groups.replica = replicaGroup.get();
    }
    for (comm::Communicator* c : groups.distinct()) {
        c->setDeterministic(cfg.deterministic);
        c->setTimeout(std::chrono::milliseconds(cfg.timeoutMs));
    }
    job.world = world.get();

    const std::unique_ptr<model::DataSource> data = train::makeDataSource(cfg);
    std::unique_ptr<strategy::Sharding> sharding =
        strategy::makeSharding(train::strategyConfigOf(cfg), cpu, groups);
    train::Trainer trainer(train::trainConfigOf(cfg), cpu, *data, sharding.get());

    // Handshakes (one per rank, rank 0 first), then the states' allocations (step −1).
    const std::string configJson = train::handshakeJson(cfg, trainer.model().units()).dump();
    if (job.rank == 0)
        for (int r = 0; r < job.size; ++r) job.writer.write(protocol::Handshake{r, job.size, configJson});
    job.shipEvents();

    train::RunOutcome outcome;
    outcome.config = cfg;
    outcome.paramCount = trainer.paramCount();
    ByteTable modelStates;
    for (std::int64_t k = 0; k < cfg.steps; ++k) {
        const train::StepResult r = trainer.step();
        if (k == 0) modelStates = r.modelStates;
        outcome.losses.push_back(r.loss);
        outcome.stepMs.push_back(static_cast<double>(r.stepNs) / 1e6);
        job.shipEvents();
        if (job.rank == 0 && job.writer.active()) {
            job.writer.write(protocol::StepSummary{r.step, r.loss, r.stepNs});
            job.writer.flush();
        }
    }
    job.ledger->setStep(cfg.steps);

    // Final weights (instrumentation traffic: not in the per-step communication).
    const std::vector<std::vector<float>> weights = trainer.fullWeights();
    train::RankResult mine;
    mine.rank = job.rank;
    mine.peak = job.ledger->peak();
    mine.peakTotal = job.ledger->peakBytes();
    mine.modelStates = modelStates;
    for (comm::Communicator* c : groups.distinct()) mine.comm.add(c->stats());
    const std::vector<std::string> results = world->gatherBytes(train::encodeRankResult(mine), 0);
    if (job.rank != 0) return 0;

    outcome.digest = train::fnv1a(weights);
    for (const std::string& r : results) outcome.ranks.push_back(train::decodeRankResult(r));
    const std::string report = train::buildReport(outcome).dump(2) + "\n";
    if (cfg.weightsPath) train::writeWeightsFile(*cfg.weightsPath, weights);
    if (cfg.jsonPath) train::writeTextFile(*cfg.jsonPath, report, "--json");
    if (job.writer.active()) {
        job.writer.write(protocol::Report{report});
        job.writer.write(protocol::End{});
        job.writer.finish();
    }
    return 0;
}

} // namespace

int main(int argc, char** argv) {
    kernels::setBlasThreads(1); // one core per rank: mpirun places the ranks
    comm::MpiRuntime mpi(&argc, &argv);
    const int rank = mpi.worldRank();
    std::vector<std::string> args(argv + 1, argv + argc);
    Job job;
    job.rank = rank;
    job.size = mpi.worldSize();
    try {
        job.config = train::parseRunConfig(args, job.size);
    } catch (const Error& e) {
        if (rank == 0) std::fprintf(stderr, "shardscope-worker: %s\n", e.what());
        return e.isUserInput() ? 2 : 1;
    }
    Ledger ledger(rank);
    ledger.setCapacity(Tier::Device, job.config.capacityBytes);
    job.ledger = &ledger;
    try {
        if (rank == 0) {
            if (job.config.streamPath) job.writer.connectSocket(*job.config.streamPath);
            if (job.config.tracePath) job.writer.openRecording(*job.config.tracePath);
        }
        return run(job);
    } catch (const std::exception& e) {
        const std::int64_t step = ledger.step();
        // Steps are counted from 1 for people (the progress lines do the same); -1 is setup.
        const std::string when = step < 0 ? "setup" : "step " + std::to_string(step + 1);
        std::fprintf(stderr, "shardscope-worker: rank %d, %s: %s\n", rank, when.c_str(), e.what());
        std::fflush(stderr);
        if (rank == 0 && job.writer.active()) {
            try {
                job.writer.write(protocol::Failure{rank, step, e.what()});
                job.writer.write(protocol::End{});
                job.writer.finish();
            } catch (...) {
            }
        }
        comm::MpiRuntime::abort(1);
    }
}
