#include "train/checkpointing.h"

#include <chrono>
#include <random>
#include <vector>

#include "checkpoint/reshard.h"
#include "core/error.h"
#include "plan/policy.h"

namespace shardscope::train {

namespace {

using checkpoint::Span;

plan::Policy policyOf(const RunConfig& c) { return plan::policyFor(c.strategy, c.knobs); }

// The spans this rank owns, from the one plan (checkpoint/reshard.h), checked against what the
// strategy actually holds: the loader's plan and the engine can never disagree silently.
std::vector<Span> ownedSpans(Trainer& t, const RunConfig& c) {
    const plan::Policy policy = policyOf(c);
    comm::Communicator& world = t.sharding().world();
    const checkpoint::Placement p = checkpoint::placementOf(policy, world.size(), world.rank());
    std::vector<Span> out;
    const auto& units = t.sharding().units();
    for (std::size_t u = 0; u < units.size(); ++u) {
        const Span s = checkpoint::ownedSpan(p, policy.shardOptimizer, static_cast<std::int32_t>(u), units[u].elements());
        const strategy::OwnedSlice o = t.sharding().owned(static_cast<std::int32_t>(u));
        if (o.begin != s.begin || o.end != s.end)
            throw Error(ErrorKind::Internal, "checkpoint: the strategy owns [" + std::to_string(o.begin) + ", " +
                                                 std::to_string(o.end) + ") of unit " + units[u].name() + ", the plan says [" +
                                                 std::to_string(s.begin) + ", " + std::to_string(s.end) + ")");
        out.push_back(s);
    }
    return out;
}

// Every rank learns whether any failed (a scalar: no events, not training traffic). A rank
// that did not fail but must stop waits for rank 0 to leave first, so rank 0's cause is the
// one the job reports.
[[noreturn]] void failTogether(comm::Communicator& world, const std::string& message, int failingRank,
                               ErrorKind kind = ErrorKind::Io, bool badInput = false) {
    if (world.rank() == 0) throw CheckpointError(kind, message, failingRank, badInput);
    try {
        world.barrier(); // never completes: rank 0 is leaving
    } catch (const Error&) {
    }
    throw Error(ErrorKind::Comm, badInput ? "the checkpoint failed to load on another rank" : "checkpoint save failed on another rank");
}

} // namespace

checkpoint::Metadata checkpointMetadata(Trainer& t, const RunConfig& c) {
    checkpoint::Metadata m;
    const plan::Policy policy = policyOf(c);
    const int world = t.sharding().world().size();
    checkpoint::describeModel(m, c.preset.shape, static_cast<std::uint64_t>(policy.shardCount(world)));
    m.strategy = std::string(plan::strategyName(c.strategy));
    m.worldSize = world;
    m.hybridGroup = policy.hybrid ? policy.hybridGroup : 0;
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

report::SaveRecord saveCheckpoint(Trainer& t, const RunConfig& c, const std::string& root) {
    const auto t0 = std::chrono::steady_clock::now();
    comm::Communicator& world = t.sharding().world();
    const checkpoint::Metadata meta = checkpointMetadata(t, c);

    // One temporary folder, named by rank 0 (an id below 2^52 travels exactly as a double).
    double id = 0;
    std::string failure;
    if (world.rank() == 0) {
        std::random_device rd;
        id = static_cast<double>((static_cast<std::uint64_t>(rd()) << 20 ^ rd()) & ((std::uint64_t{1} << 52) - 1));
        try {
            checkpoint::createTemp(root, checkpoint::tempDirName(meta.step, std::to_string(static_cast<std::uint64_t>(id))));
        } catch (const Error& e) {
            failure = e.what();
            id = -1;
        }
    }
    id = world.sumScalar(id);
    if (id < 0) failTogether(world, "--save: " + failure, 0);
    const std::string temp = checkpoint::tempDirName(meta.step, std::to_string(static_cast<std::uint64_t>(id)));

    // This rank's share, snapshotted to host memory, then written: the rank's save span.
    t.markSpan(EventKind::ComputeBegin, Phase::Save);
    const plan::Policy policy = policyOf(c);
    const checkpoint::Placement place = checkpoint::placementOf(policy, world.size(), world.rank());
    const std::vector<Span> owned = ownedSpans(t, c);
    device::Ops& ops = t.deviceOps();
    std::vector<std::vector<float>> host;
    host.reserve(owned.size() * 3);
    std::vector<checkpoint::SliceData> slices;
    for (std::size_t u = 0; u < owned.size(); ++u) {
        const Span part = checkpoint::replicaPart(owned[u], place.copies, place.copyIndex);
        const strategy::OwnedSlice o = t.sharding().owned(static_cast<std::int32_t>(u));
        const std::uint64_t at = part.begin - owned[u].begin;
        const float* from[3] = {o.weights, o.m, o.v};
        for (const float* f : from) {
            host.emplace_back(part.elements());
            if (part.elements() > 0) ops.download(host.back().data(), f + at, part.elements() * sizeof(float));
        }
        const std::size_t k = host.size();
        slices.push_back({part, host[k - 3].data(), host[k - 2].data(), host[k - 1].data()});
    }
    std::string mine;
    std::uint64_t written = 0;
    try {
        const checkpoint::DataFile file = checkpoint::writeRankFile(root, temp, world.rank(), slices);
        written = file.bytes;
        mine = checkpoint::dataFileJson(file, meta.version);
    } catch (const Error& e) {
        mine = std::string("!") + e.what();
    }
    t.markSpan(EventKind::ComputeEnd, Phase::Save, written);
    const std::vector<std::string> parts = world.gatherBytes(mine, 0);

    report::SaveRecord record;
    record.step = meta.step;
    double failed = 0;
    int failingRank = 0;
    if (world.rank() == 0) {
        checkpoint::Metadata full = meta;
        for (std::size_t r = 0; r < parts.size() && failure.empty(); ++r) {
            if (!parts[r].empty() && parts[r][0] == '!') {
                failure = "--save: " + parts[r].substr(1);
                failingRank = static_cast<int>(r);
            }
            else
                try {
                    full.files.push_back(checkpoint::parseDataFile(parts[r], meta.version, meta.chunkElements,
                                                                   "rank " + std::to_string(r) + "'s file entry"));
                } catch (const Error& e) {
                    failure = std::string("--save: ") + e.what();
                }
        }
        if (failure.empty()) {
            try {
                record.path = checkpoint::commit(root, temp, full);
            } catch (const Error& e) {
                failure = std::string("--save: ") + e.what();
            }
        }
        if (!failure.empty()) {
            checkpoint::discardTemp(root, temp);
            failed = 1;
        }
        for (const auto& f : full.files) record.bytes += f.bytes;
    }
    if (world.sumScalar(failed) > 0) failTogether(world, failure, failingRank);
    if (record.path.empty()) record.path = root + "/" + checkpoint::stepDirName(meta.step);
    record.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return record;
}

ResumeResult resumeCheckpoint(Trainer& t, const RunConfig& c, const std::string& path) {
    const checkpoint::Opened opened = checkpoint::openCheckpoint(path);
    const checkpoint::Metadata& m = opened.meta;
    const plan::GptShape& s = c.preset.shape;
    if (m.shape.layers != s.layers || m.shape.dModel != s.dModel || m.shape.heads != s.heads || m.shape.vocab != s.vocab ||
        m.shape.seqLen != s.seqLen)
        throwInvalid("--resume: '" + opened.dir + "' holds another model than --model " + c.preset.name);
    const std::vector<Span> owned = ownedSpans(t, c);
    std::vector<std::vector<float>> host;
    host.reserve(owned.size() * 3);
    std::vector<checkpoint::SliceTarget> targets;
    for (const Span& sp : owned) {
        for (int k = 0; k < 3; ++k) host.emplace_back(sp.elements());
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
        while (static_cast<std::size_t>(bad) < problems.size() && problems[static_cast<std::size_t>(bad)].empty()) ++bad;
        failTogether(world, world.rank() == 0 ? "--resume: " + problems[static_cast<std::size_t>(bad)] : "", bad,
                     ErrorKind::Format, true);
    }
    device::Ops& ops = t.deviceOps();
    for (std::size_t u = 0; u < owned.size(); ++u) {
        const strategy::OwnedSlice o = t.sharding().owned(static_cast<std::int32_t>(u));
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
