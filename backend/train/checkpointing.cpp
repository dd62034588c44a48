#include "train/checkpointing.h"

#include "checkpoint/reshard.h"
#include "core/error.h"
#include "plan/policy.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <random>
#include <thread>
#include <vector>

namespace shardscope::train {

namespace {

using checkpoint::Span;

plan::Policy policyOf(const RunConfig& c) {
    return plan::policyFor(c.strategy, c.knobs);
}

// Where this rank sits among the ranks that share its units: its stage's data-parallel group
// (the world without a pipeline). Another stage's ranks hold other units, so no byte is placed
// twice across stages.
checkpoint::Placement placementOf(Trainer& t, const plan::Policy& policy) {
    return checkpoint::placementOf(policy, t.sharding().dataRanks(), t.sharding().dataRank());
}

// The spans this rank owns of its stage's units (every unit without a pipeline), from the one
// plan (checkpoint/reshard.h), checked against what the strategy actually holds: the loader's
// plan and the engine can never disagree silently.
std::vector<Span> ownedSpans(Trainer& t, const RunConfig& c) {
    const plan::Policy policy = policyOf(c);
    const checkpoint::Placement p = placementOf(t, policy);
    std::vector<Span> out;
    const auto& units = t.sharding().units();
    for (std::int32_t u = t.sharding().firstUnit(); u < t.sharding().endUnit(); ++u) {
        const Span s = checkpoint::ownedSpan(p, policy.shardOptimizer, u,
                                             units[static_cast<std::size_t>(u)].elements());
        const strategy::OwnedSlice o = t.sharding().owned(u);
        if (o.begin != s.begin || o.end != s.end)
            throw Error(ErrorKind::Internal,
                        "checkpoint: the strategy owns [" + std::to_string(o.begin) + ", " +
                            std::to_string(o.end) + ") of unit " +
                            units[static_cast<std::size_t>(u)].name() + ", the plan says [" +
                            std::to_string(s.begin) + ", " + std::to_string(s.end) + ")");
        out.push_back(s);
    }
    return out;
}

// Every rank learns whether any failed (a scalar: no events, not training traffic). A rank
// that did not fail but must stop waits for rank 0 to leave first, so rank 0's cause is the
// one the job reports.
[[noreturn]] void failTogether(comm::Communicator& world, const std::string& message,
                               int failingRank, ErrorKind kind = ErrorKind::Io,
                               bool badInput = false) {
    if (world.rank() == 0) throw CheckpointError(kind, message, failingRank, badInput);
    try {
        world.barrier(); // never completes: rank 0 is leaving
    } catch (const Error&) {
    }
    throw Error(ErrorKind::Comm, badInput ? "the checkpoint failed to load on another rank"
                                          : "checkpoint save failed on another rank");
}

} // namespace

checkpoint::Metadata checkpointMetadata(Trainer& t, const RunConfig& c) {
    checkpoint::Metadata m;
    const plan::Policy policy = policyOf(c);
    const int world = t.sharding().world().size();
    checkpoint::describeModel(
        m, c.preset.shape, static_cast<std::uint64_t>(policy.shardCount(t.sharding().dataRanks())));
    m.strategy = std::string(plan::strategyName(c.strategy));
    m.worldSize = world;
    m.hybridGroup = policy.hybrid ? policy.hybridGroup : 0;
    m.pipeParallel = std::max(c.pipeParallel, 1);
    m.precision = c.precision == plan::PrecisionKind::Fp32 ? "fp32" : "bf16";
    m.step = t.runStep();
    m.dataPosition = t.dataPosition();
    m.seed = c.seed;
    m.microBatch = c.preset.microBatch;
    m.gradAccum = c.knobs.gradAccumSteps;
    const AdamWConfig& o = t.config().optimizer;
    m.optimizer = {o.learningRate, o.beta1, o.beta2, o.eps, o.weightDecay, o.clipNorm, t.runStep()};
    return m;
}

// One save between its snapshot and its commit.
struct PendingSave {
    checkpoint::Metadata meta;
    std::string root, temp;
    device::Buffer snapshot; // host tier: this rank's share of master, m, v
    std::vector<checkpoint::SliceData> slices;
    std::chrono::steady_clock::time_point t0;
    double blocked = 0;
    std::string result; // the file's entry as JSON, or "!" + what went wrong
    std::thread writer;
};

namespace {

// Collective: names the temporary folder (rank 0 creates it) and copies this rank's share
// to host memory (one ledgered host allocation: the snapshot the writer reads).
std::unique_ptr<PendingSave> beginSave(Trainer& t, const RunConfig& c, const std::string& root) {
    auto p = std::make_unique<PendingSave>();
    p->t0 = std::chrono::steady_clock::now();
    p->root = root;
    comm::Communicator& world = t.sharding().world();
    p->meta = checkpointMetadata(t, c);

    // One temporary folder, named by rank 0 (an id below 2^52 travels exactly as a double).
    double id = 0;
    std::string failure;
    if (world.rank() == 0) {
        std::random_device rd;
        id = static_cast<double>((static_cast<std::uint64_t>(rd()) << 20 ^ rd()) &
                                 ((std::uint64_t{1} << 52) - 1));
        try {
            checkpoint::createTemp(
                root, checkpoint::tempDirName(p->meta.step,
                                              std::to_string(static_cast<std::uint64_t>(id))));
        } catch (const Error& e) {
            failure = e.what();
            id = -1;
        }
    }
    id = world.sumScalar(id);
    if (id < 0) failTogether(world, "--save: " + failure, 0);
    p->temp = checkpoint::tempDirName(p->meta.step, std::to_string(static_cast<std::uint64_t>(id)));

    const plan::Policy policy = policyOf(c);
    const checkpoint::Placement place = placementOf(t, policy);
    const std::vector<Span> owned = ownedSpans(t, c);
    std::vector<Span> parts;
    std::uint64_t elements = 0;
    for (const Span& o : owned) {
        parts.push_back(checkpoint::replicaPart(o, place.copies, place.copyIndex));
        elements += parts.back().elements();
    }
    p->snapshot =
        t.device().allocate(std::max<std::uint64_t>(1, elements * checkpoint::kBytesPerElement),
                            {Category::Workspace, Tier::Host, kNoUnit});
    float* at = p->snapshot.ptr<float>();
    device::Ops& ops = t.deviceOps();
    for (std::size_t u = 0; u < owned.size(); ++u) {
        const Span& part = parts[u];
        const std::uint64_t n = part.elements();
        const strategy::OwnedSlice o = t.sharding().owned(owned[u].unit);
        const float* from[3] = {o.weights, o.m, o.v};
        for (int s = 0; s < 3; ++s)
            if (n > 0)
                ops.download(at + static_cast<std::uint64_t>(s) * n,
                             from[s] + (part.begin - owned[u].begin), n * sizeof(float));
        p->slices.push_back({part, at, at + n, at + 2 * n});
        at += 3 * n;
    }
    return p;
}

// This rank's file (on the writer thread when asynchronous): never throws.
void writeSave(PendingSave& p, int rank) {
    try {
        const checkpoint::DataFile file =
            checkpoint::writeRankFile(p.root, p.temp, rank, p.slices, p.meta.chunkElements);
        p.result = checkpoint::dataFileJson(file, p.meta.version);
    } catch (const std::exception& e) {
        p.result = std::string("!") + e.what();
    }
}

// Collective, once every rank's file is written: rank 0 commits, or everyone fails together.
report::SaveRecord completeSave(comm::Communicator& world, PendingSave& p) {
    const std::vector<std::string> parts = world.gatherBytes(p.result, 0);
    report::SaveRecord record;
    record.step = p.meta.step;
    std::string failure;
    double failed = 0;
    int failingRank = 0;
    if (world.rank() == 0) {
        checkpoint::Metadata full = p.meta;
        for (std::size_t r = 0; r < parts.size() && failure.empty(); ++r) {
            if (!parts[r].empty() && parts[r][0] == '!') {
                failure = "--save: " + parts[r].substr(1);
                failingRank = static_cast<int>(r);
            } else {
                try {
                    full.files.push_back(
                        checkpoint::parseDataFile(parts[r], p.meta.version, p.meta.chunkElements,
                                                  "rank " + std::to_string(r) + "'s file entry"));
                } catch (const Error& e) {
                    failure = std::string("--save: ") + e.what();
                    failingRank = static_cast<int>(r);
                }
            }
        }
        if (failure.empty()) {
            try {
                record.path = checkpoint::commit(p.root, p.temp, full);
            } catch (const Error& e) {
                failure = std::string("--save: ") + e.what();
            }
        }
        if (!failure.empty()) {
            checkpoint::discardTemp(p.root, p.temp);
            failed = 1;
        }
        for (const auto& f : full.files)
            record.bytes += f.bytes;
    }
    if (world.sumScalar(failed) > 0) failTogether(world, failure, failingRank);
    if (record.path.empty()) record.path = p.root + "/" + checkpoint::stepDirName(p.meta.step);
    record.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - p.t0).count();
    record.secondsBlocked = p.blocked;
    return record;
}

double since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

} // namespace

report::SaveRecord saveCheckpoint(Trainer& t, const RunConfig& c, const std::string& root) {
    const std::unique_ptr<PendingSave> p = beginSave(t, c, root);
    t.markSpan(EventKind::ComputeBegin, Phase::Save);
    writeSave(*p, t.sharding().world().rank());
    t.markSpan(EventKind::ComputeEnd, Phase::Save,
               p->result.starts_with("!") ? 0 : p->snapshot.bytes());
    report::SaveRecord r = completeSave(t.sharding().world(), *p);
    r.secondsBlocked = r.seconds;
    return r;
}

CheckpointSaver::CheckpointSaver(Trainer& t, const RunConfig& c) : trainer_(t), config_(c) {}

CheckpointSaver::~CheckpointSaver() {
    // Unwinding from a failure: the in-flight file is finished (its buffers live here) but
    // never committed; its temporary folder stays for inspect to list.
    if (pending_ && pending_->writer.joinable()) pending_->writer.join();
}

void CheckpointSaver::save() {
    if (!config_.saveAsync) {
        records_.push_back(saveCheckpoint(trainer_, config_, *config_.saveDir));
        return;
    }
    finishPending(); // the previous save's commit: at most one save in flight
    pending_ = beginSave(trainer_, config_, *config_.saveDir);
    const std::uint64_t bytes = pending_->snapshot.bytes();
    trainer_.markSpan(EventKind::ComputeBegin, Phase::Save);
    const int rank = trainer_.sharding().world().rank();
    PendingSave* p = pending_.get();
    pending_->writer = std::thread([p, rank] { writeSave(*p, rank); });
    trainer_.markSpan(EventKind::ComputeEnd, Phase::Save, bytes);
    // From this save's start: the wait for the previous one above is counted in that one's record.
    pending_->blocked = since(pending_->t0);
}

void CheckpointSaver::finish() {
    finishPending();
}

void CheckpointSaver::finishPending() {
    if (!pending_) return;
    const auto waitFrom = std::chrono::steady_clock::now();
    pending_->writer.join();
    const std::unique_ptr<PendingSave> p = std::move(pending_);
    records_.push_back(completeSave(trainer_.sharding().world(), *p));
    // The loop (or the run's end) waited here for the writer and the commit: held by this save,
    // up to the same end its `seconds` counts to.
    report::SaveRecord& r = records_.back();
    r.secondsBlocked +=
        std::max(0.0, r.seconds - std::chrono::duration<double>(waitFrom - p->t0).count());
}

ResumeResult resumeCheckpoint(Trainer& t, const RunConfig& c, const std::string& path) {
    const checkpoint::Opened opened = checkpoint::openCheckpoint(path);
    const checkpoint::Metadata& m = opened.meta;
    const plan::GptShape& s = c.preset.shape;
    if (m.shape.layers != s.layers || m.shape.dModel != s.dModel || m.shape.heads != s.heads ||
        m.shape.vocab != s.vocab || m.shape.seqLen != s.seqLen)
        throwInvalid("--resume: '" + opened.dir + "' holds another model than --model " +
                     c.preset.name);
    const std::vector<Span> owned = ownedSpans(t, c);
    std::vector<std::vector<float>> host;
    host.reserve(owned.size() * 3);
    std::vector<checkpoint::SliceTarget> targets;
    for (const Span& sp : owned) {
        for (int k = 0; k < 3; ++k)
            host.emplace_back(sp.elements());
        const std::size_t k = host.size();
        targets.push_back({sp, host[k - 3].data(), host[k - 2].data(), host[k - 1].data()});
    }
    ResumeResult out;
    // A damaged part may be seen by one rank only (each reads its own chunks): all agree.
    std::string problem;
    try {
        out.stats = checkpoint::load(opened, targets);
    } catch (const Error& e) {
        if (!e.isUserInput()) throw;
        problem = e.what();
    }
    comm::Communicator& world = t.sharding().world();
    const std::vector<std::string> problems = world.gatherBytes(problem, 0);
    if (world.sumScalar(problem.empty() ? 0.0 : 1.0) > 0) {
        int bad = 0;
        while (static_cast<std::size_t>(bad) < problems.size() &&
               problems[static_cast<std::size_t>(bad)].empty())
            ++bad;
        failTogether(
            world, world.rank() == 0 ? "--resume: " + problems[static_cast<std::size_t>(bad)] : "",
            bad, ErrorKind::Format, true);
    }
    device::Ops& ops = t.deviceOps();
    for (std::size_t u = 0; u < owned.size(); ++u) {
        const strategy::OwnedSlice o = t.sharding().owned(owned[u].unit);
        const std::uint64_t bytes = owned[u].elements() * sizeof(float);
        if (bytes == 0) continue;
        ops.upload(o.weights, targets[u].master, bytes);
        ops.upload(o.m, targets[u].m, bytes);
        ops.upload(o.v, targets[u].v, bytes);
    }
    // The working parameters (bf16 copies, gathered ZeRO-1/2 buffers) follow from the owned
    // weights exactly as after an optimizer step.
    t.sharding().afterOptimizer();
    t.continueFrom(m.step, m.dataPosition);
    out.from = {opened.dir, m.step, m.worldSize, m.strategy};
    return out;
}

} // namespace shardscope::train
