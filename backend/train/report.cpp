#include "train/report.h"

#include "core/error.h"
#include "theory/activations.h"
#include "train/report_pipeline.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace shardscope::train {

namespace {

template <class T> void put(std::string& out, const T& v) {
    out.append(reinterpret_cast<const char*>(&v), sizeof(T));
}
template <class T> T take(const std::string& in, std::size_t& at) {
    if (at + sizeof(T) > in.size()) throw Error(ErrorKind::Format, "rank result is truncated");
    T v;
    std::memcpy(&v, in.data() + at, sizeof(T));
    at += sizeof(T);
    return v;
}

void putTable(std::string& out, const ByteTable& t) {
    for (const auto& row : t.bytes)
        for (std::uint64_t v : row)
            put(out, v);
}
ByteTable takeTable(const std::string& in, std::size_t& at) {
    ByteTable t;
    for (auto& row : t.bytes)
        for (std::uint64_t& v : row)
            v = take<std::uint64_t>(in, at);
    return t;
}

double perStep(std::uint64_t total, std::int64_t steps) {
    return steps > 0 ? static_cast<double>(total) / static_cast<double>(steps) : 0.0;
}

// Sent bytes (which 0), payload bytes (1) or calls (2) per step, by collective kind.
report::KindValues commPerStep(const comm::CommStats& s, std::int64_t steps, int which) {
    report::KindValues out;
    for (std::size_t op = 1; op < kCollectiveOpCount; ++op) { // 0 is CollectiveOp::None
        if (s.calls[op] == 0) continue;
        const std::uint64_t v = which == 0   ? s.sentBytes[op]
                                : which == 1 ? s.payloadBytes[op]
                                             : s.calls[op];
        out.emplace_back(std::string(collectiveOpName(static_cast<CollectiveOp>(op))),
                         perStep(v, steps));
    }
    return out;
}

report::ExposedComm exposedComm(const std::vector<StepOverlap>& steps) {
    const OverlapSummary s = summarize(steps);
    report::ExposedComm e;
    e.fractionMedian = s.medianFraction;
    for (const StepOverlap& o : steps)
        e.fractionPerStep.push_back(o.fraction());
    e.commUnionNs = s.commUnionNs;
    e.exposedNs = s.exposedNs;
    e.stepNs = s.stepNs;
    return e;
}

report::ExposedTransfer exposedTransfer(const std::vector<StepOverlap>& steps) {
    const OverlapSummary s = summarize(steps);
    report::ExposedTransfer e;
    e.fractionMedian = s.medianTransferFraction;
    for (const StepOverlap& o : steps)
        e.fractionPerStep.push_back(o.transferFraction());
    e.transferUnionNs = s.transferUnionNs;
    e.exposedNs = s.transferExposedNs;
    return e;
}

// One tier's bytes by category; model-state categories only when asked.
report::TierCategoryBytes tierCategoryBytes(const ByteTable& table, bool statesOnly) {
    report::TierCategoryBytes out{};
    for (Tier t : kAllTiers)
        for (Category c : kAllCategories)
            if (!statesOnly || stateGroup(c) != StateGroup::Other)
                out[index(t)][index(c)] = table.at(c, t);
    return out;
}

// The ledger's bytes by category (summed over tiers); model-state categories only when asked.
report::CategoryBytes categoryBytes(const ByteTable& table, bool statesOnly) {
    report::CategoryBytes out{};
    for (Category c : kAllCategories)
        if (!statesOnly || stateGroup(c) != StateGroup::Other) out[index(c)] = table.category(c);
    return out;
}

} // namespace

std::string mib(double bytes) {
    char text[48];
    std::snprintf(text, sizeof(text), "%.3f MiB", bytes / 1048576.0);
    return text;
}

std::string encodeRankResult(const RankResult& r) {
    std::string out;
    put(out, r.rank);
    putTable(out, r.peak);
    put(out, r.peakTotal);
    for (std::uint64_t v : r.tierPeaks)
        put(out, v);
    putTable(out, r.modelStates);
    for (const auto* arr : {&r.comm.calls, &r.comm.payloadBytes, &r.comm.sentBytes, &r.comm.busyNs})
        for (std::uint64_t v : *arr)
            put(out, v);
    put(out, static_cast<std::uint64_t>(r.overlap.size()));
    for (const StepOverlap& o : r.overlap) {
        put(out, o.stepNs);
        put(out, o.commUnionNs);
        put(out, o.exposedNs);
        put(out, o.transferUnionNs);
        put(out, o.transferExposedNs);
        put(out, o.workWindowNs);
        put(out, o.workNs);
        put(out, o.forwardNs);
        put(out, o.backwardNs);
        put(out, o.weightGradNs);
    }
    put(out, static_cast<std::uint8_t>(r.device ? 1 : 0));
    if (r.device) {
        const DeviceMemory& d = *r.device;
        put(out, static_cast<std::uint64_t>(d.name.size()));
        out += d.name;
        put(out, d.ordinal);
        for (std::uint64_t v : {d.ledgerPeakBytes, d.poolUsedBytes, d.poolUsedHighBytes,
                                d.poolReservedBytes, d.poolReservedHighBytes, d.deviceTotalBytes,
                                d.deviceUsedBytes, d.outsideLedgerBytes, d.declaredWorkspaceBytes})
            put(out, v);
    }
    put(out, r.checkpointBytesRead);
    return out;
}

RankResult decodeRankResult(const std::string& in) {
    RankResult r;
    std::size_t at = 0;
    r.rank = take<std::int32_t>(in, at);
    r.peak = takeTable(in, at);
    r.peakTotal = take<std::uint64_t>(in, at);
    for (std::uint64_t& v : r.tierPeaks)
        v = take<std::uint64_t>(in, at);
    r.modelStates = takeTable(in, at);
    for (auto* arr : {&r.comm.calls, &r.comm.payloadBytes, &r.comm.sentBytes, &r.comm.busyNs})
        for (std::uint64_t& v : *arr)
            v = take<std::uint64_t>(in, at);
    const auto steps = take<std::uint64_t>(in, at);
    // Each step is ten u64s: a count that the remaining bytes cannot hold is corrupt (and must
    // not drive a huge reserve).
    if (steps > (in.size() - at) / (10 * sizeof(std::uint64_t)))
        throw Error(ErrorKind::Format, "rank result is truncated");
    for (std::uint64_t k = 0; k < steps; ++k) {
        StepOverlap o;
        o.stepNs = take<std::uint64_t>(in, at);
        o.commUnionNs = take<std::uint64_t>(in, at);
        o.exposedNs = take<std::uint64_t>(in, at);
        o.transferUnionNs = take<std::uint64_t>(in, at);
        o.transferExposedNs = take<std::uint64_t>(in, at);
        o.workWindowNs = take<std::uint64_t>(in, at);
        o.workNs = take<std::uint64_t>(in, at);
        o.forwardNs = take<std::uint64_t>(in, at);
        o.backwardNs = take<std::uint64_t>(in, at);
        o.weightGradNs = take<std::uint64_t>(in, at);
        if (o.workNs > o.workWindowNs || o.workWindowNs > o.stepNs)
            throw Error(ErrorKind::Format, "rank result's step work exceeds its window");
        r.overlap.push_back(o);
    }
    if (take<std::uint8_t>(in, at) != 0) {
        DeviceMemory d;
        const auto nameBytes = take<std::uint64_t>(in, at);
        if (nameBytes > in.size() - at) throw Error(ErrorKind::Format, "rank result is truncated");
        d.name = in.substr(at, static_cast<std::size_t>(nameBytes));
        at += static_cast<std::size_t>(nameBytes);
        d.ordinal = take<std::int32_t>(in, at);
        for (std::uint64_t* v :
             {&d.ledgerPeakBytes, &d.poolUsedBytes, &d.poolUsedHighBytes, &d.poolReservedBytes,
              &d.poolReservedHighBytes, &d.deviceTotalBytes, &d.deviceUsedBytes,
              &d.outsideLedgerBytes, &d.declaredWorkspaceBytes})
            *v = take<std::uint64_t>(in, at);
        r.device = d;
    }
    r.checkpointBytesRead = take<std::uint64_t>(in, at);
    if (at != in.size()) throw Error(ErrorKind::Format, "rank result has trailing bytes");
    return r;
}

nlohmann::json handshakeJson(const RunConfig& config, const std::vector<plan::UnitLayout>& units,
                             std::uint64_t predictedPeakBytes,
                             const std::vector<theory::PeakPrediction>& stagePredicted) {
    const theory::Scenario s = scenarioOf(config);
    theory::Scenario ddp = s;
    ddp.strategy = plan::Strategy::Ddp;
    const auto shards = static_cast<std::uint64_t>(theory::shardCount(s));
    std::vector<report::UnitInfo> list;
    for (const auto& u : units)
        list.push_back({u.name(), u.elements(), u.paddedElements(shards)});
    // Ψ of the whole model, as the final report says; the units are this rank's TP slices.
    const std::uint64_t params = plan::modelParamCount(*s.shape);
    // A pipeline's stages hold different units: each has its own theory (and dry run).
    std::vector<report::StageTheory> stages;
    if (config.pipeParallel > 1 &&
        stagePredicted.size() == static_cast<std::size_t>(config.pipeParallel))
        for (int st = 0; st < config.pipeParallel; ++st) {
            theory::Scenario one = scenarioOf(config, st), oneDdp = one;
            oneDdp.strategy = plan::Strategy::Ddp;
            stages.push_back({categoryBytes(theory::modelStates(one).perRank, true),
                              categoryBytes(theory::modelStates(oneDdp).perRank, true),
                              stagePredicted[static_cast<std::size_t>(st)].peakBytes});
        }
    nlohmann::json j = report::handshakeJson(toJson(config), params, list,
                                             categoryBytes(theory::modelStates(s).perRank, true),
                                             categoryBytes(theory::modelStates(ddp).perRank, true),
                                             predictedPeakBytes, config.stepsBefore, stages);
    j["bf16_gemm"] = s.knobs.bf16Gemm; // read back by configFromJson: the GUI's theory of the run
    return j;
}

report::RunReport makeReport(const RunOutcome& o) {
    const RunConfig& c = o.config;
    const theory::Scenario s = scenarioOf(c);
    const theory::ModelStates states = theory::modelStates(s);
    const theory::PeakPrediction& peak = o.predicted;
    const theory::CommPerStep comm = theory::commPerStep(s);
    theory::Scenario ddpScenario = s;
    ddpScenario.strategy = plan::Strategy::Ddp;

    report::RunReport r;
    r.gemmEngine = o.gemmEngine;
    r.bf16Gemm = s.knobs.bf16Gemm;
    r.paramCount = o.paramCount;
    r.worldSize = c.worldSize;
    r.strategy = std::string(plan::strategyName(c.strategy));
    r.model = c.preset.name;
    r.precision = std::string(plan::precisionName(c.precision));
    r.checkpointing = c.checkpointing;
    r.microBatch = c.preset.microBatch;
    r.gradAccum = c.knobs.gradAccumSteps;
    r.steps = c.steps;
    r.seed = c.seed;
    r.deterministic = c.deterministic;
    r.data = c.dataFile ? *c.dataFile : std::string("synthetic");
    r.config = toJson(c);
    r.losses = o.losses;
    r.stepMs = o.stepMs;

    // With a pipeline every stage has its own theory (its units) and its own dry run; a rank is
    // compared with its stage's (stage = rank / (T·D), plan/mesh.h).
    const int stages = std::max(c.pipeParallel, 1);
    const int perStage = std::max(c.worldSize / stages, 1);
    const auto stageOf = [&](int rank) { return std::clamp(rank / perStage, 0, stages - 1); };
    std::vector<theory::ModelStates> stageStates;
    for (int st = 0; st < stages; ++st)
        stageStates.push_back(st == 0 ? states : theory::modelStates(scenarioOf(c, st)));
    const bool perStagePeaks =
        stages > 1 && o.stagePredicted.size() == static_cast<std::size_t>(stages);
    std::vector<std::uint64_t> stagePeak(static_cast<std::size_t>(stages), 0);
    std::vector<std::size_t> stagePeakRank(static_cast<std::size_t>(stages), 0);

    bool statesEqual = true;
    for (std::size_t i = 0; i < o.ranks.size(); ++i) {
        const RankResult& rr = o.ranks[i];
        report::RankReport rank;
        rank.rank = rr.rank;
        rank.peakBytes = categoryBytes(rr.peak, false);
        rank.peakTotal = rr.peakTotal;
        rank.modelStateBytes = categoryBytes(rr.modelStates, true);
        rank.modelStateBytesByTier = tierCategoryBytes(rr.modelStates, true);
        rank.peakBytesByTier = tierCategoryBytes(rr.peak, false);
        rank.peakTotalByTier = rr.tierPeaks;
        rank.commBytesPerStep = commPerStep(rr.comm, c.steps, 0);
        rank.exposedComm = exposedComm(rr.overlap);
        rank.device = rr.device;
        rank.exposedTransfer = exposedTransfer(rr.overlap);
        rank.checkpointBytesRead = rr.checkpointBytesRead;
        r.exposedCommFraction = std::max(r.exposedCommFraction, rank.exposedComm.fractionMedian);
        r.exposedTransferFraction =
            std::max(r.exposedTransferFraction, rank.exposedTransfer.fractionMedian);
        r.ranks.push_back(std::move(rank));
        const auto st = static_cast<std::size_t>(stageOf(rr.rank));
        statesEqual = statesEqual && rr.modelStates == stageStates[st].perRank;
        // The prediction is the device tier's.
        if (rr.tierPeaks[index(Tier::Device)] > stagePeak[st]) {
            stagePeak[st] = rr.tierPeaks[index(Tier::Device)];
            stagePeakRank[st] = i;
        }
    }
    // Without a pipeline the breakdown is rank 0's, as it always was.
    if (stages == 1) stagePeakRank[0] = 0;
    // The stage whose peak is furthest from its prediction speaks for the run (one stage
    // without a pipeline).
    std::size_t worst = 0;
    const auto predictedOf = [&](std::size_t st) -> const theory::PeakPrediction& {
        return perStagePeaks ? o.stagePredicted[st] : peak;
    };
    const auto deltaOf = [&](std::size_t st) {
        return static_cast<std::int64_t>(stagePeak[st]) -
               static_cast<std::int64_t>(predictedOf(st).peakBytes);
    };
    if (perStagePeaks)
        for (std::size_t st = 1; st < stagePeak.size(); ++st)
            if (std::llabs(deltaOf(st)) > std::llabs(deltaOf(worst))) worst = st;
    const std::uint64_t peakMax = stagePeak[worst];
    const theory::PeakPrediction& reference = predictedOf(worst);

    report::TheoryValues& t = r.theory;
    t.modelStateBytes = categoryBytes(states.perRank, true);
    t.ddpModelStateBytes = categoryBytes(theory::modelStates(ddpScenario).perRank, true);
    t.paddingBytes = states.paddingBytes;
    t.modelStateBytesByTier = tierCategoryBytes(states.perRank, true);
    t.peakBytesByTier = peak.tierPeaks;
    t.predictedPeakBytes = peak.peakBytes;
    t.peakAt = categoryBytes(peak.atPeak, false);
    t.peakByCategory = categoryBytes(peak.categoryPeaks, false);
    t.peakPhase = peak.peakPhase;
    t.activationPeakBytes = peak.activationBytes;
    for (const theory::CommVolume& v : comm.byKind) {
        const std::string k(collectiveOpName(v.kind));
        t.commBytesPerStep.emplace_back(k, static_cast<double>(v.sentBytes));
        t.commPayloadBytesPerStep.emplace_back(k, static_cast<double>(v.payloadBytes));
        t.commCallsPerStep.emplace_back(k, static_cast<double>(v.calls));
    }
    t.psiEquivalents = comm.psiEquivalents;
    t.notes = peak.notes;
    // A pipeline's stages, each with its own units, states, dry-run peak and traffic.
    for (int st = 0; perStagePeaks && st < stages; ++st) {
        const auto i = static_cast<std::size_t>(st);
        const theory::Scenario one = scenarioOf(c, st);
        theory::Scenario oneDdp = one;
        oneDdp.strategy = plan::Strategy::Ddp;
        const plan::StageUnits units = one.stageUnits();
        report::StageTheoryValues v;
        v.firstUnit = units.first;
        v.endUnit = units.end;
        if (one.virtualStages > 1)
            for (const plan::StageUnits& chunk : one.stageChunks())
                v.chunks.emplace_back(chunk.first, chunk.end);
        v.modelStateBytes = categoryBytes(stageStates[i].perRank, true);
        v.ddpModelStateBytes = categoryBytes(theory::modelStates(oneDdp).perRank, true);
        v.predictedPeakBytes = o.stagePredicted[i].peakBytes;
        for (const theory::CommVolume& cv : theory::commPerStep(one).byKind)
            v.commBytesPerStep.emplace_back(std::string(collectiveOpName(cv.kind)),
                                            static_cast<double>(cv.sentBytes));
        t.stages.push_back(std::move(v));
    }

    // How measurement and prediction compare, and why they differ where they do.
    const comm::CommStats& rank0 = o.ranks.empty() ? comm::CommStats{} : o.ranks.front().comm;
    const double measuredSent = perStep(rank0.totalSentBytes(), c.steps);
    const double commDelta = comm.totalSentBytes > 0
                                 ? (measuredSent - static_cast<double>(comm.totalSentBytes)) /
                                       static_cast<double>(comm.totalSentBytes)
                                 : measuredSent;
    const std::int64_t peakDelta = deltaOf(worst);
    const double peakFraction =
        reference.peakBytes > 0
            ? static_cast<double>(peakDelta) / static_cast<double>(reference.peakBytes)
            : 0.0;
    r.comparison = {statesEqual, peakDelta, peakFraction, commDelta};
    std::vector<std::string>& notes = r.notes;
    // A conversion (--resume … --steps 0 --save NEW) trains no step: there is no step to set
    // against the theory, only what it read and wrote (checkpoint_bytes_read, saves).
    const bool conversion = c.steps == 0;
    if (conversion)
        notes.push_back("a conversion: no training step ran, so no measured peak, model states or "
                        "traffic is compared with the theory; it read checkpoint_bytes_read per "
                        "rank and wrote the saves listed");
    if (!statesEqual && !conversion)
        notes.push_back("model states differ from theory::modelStates (a bug: they are modelled "
                        "byte for byte)");
    if (conversion) {
        // no step: no peak to compare
    } else if (peakDelta == 0) {
        std::string same = "measured peak equals the predicted peak byte for byte (";
        same.append(mib(static_cast<double>(peakMax)))
            .append(", ")
            .append(reference.peakPhase)
            .append(")");
        notes.push_back(same);
    } else {
        std::string why = "measured peak ";
        if (stages > 1) why.append("of stage ").append(std::to_string(worst)).append(" ");
        why.append(mib(static_cast<double>(peakMax))).append(" vs predicted ");
        why.append(mib(static_cast<double>(reference.peakBytes))).append(" (");
        if (peakDelta > 0) why.push_back('+');
        why.append(std::to_string(peakDelta)).append(" B):");
        bool onlyMessages = stages > 1, messages = false, anyCategory = false;
        if (!o.ranks.empty())
            for (Category cat : kAllCategories) {
                const auto m = static_cast<std::int64_t>(
                    o.ranks[stagePeakRank[worst]].peak.at(cat, Tier::Device));
                const auto pt =
                    static_cast<std::int64_t>(reference.categoryPeaks.at(cat, Tier::Device));
                if (m != pt && cat != Category::CommBuffer) onlyMessages = false;
                if (m != pt && cat == Category::CommBuffer) messages = true;
                anyCategory = anyCategory || m != pt;
                if (m != pt)
                    why.append(" ")
                        .append(categoryName(cat))
                        .append(" peak ")
                        .append(std::to_string(m - pt))
                        .append(" B;");
            }
        if (onlyMessages && messages)
            why.append(" a pipeline message's comm_buffer is held until the neighbouring stage "
                       "has copied it, which depends on timing; the dry run's messages arrive at "
                       "once");
        else if (stages > 1 && !anyCategory)
            why.append(" every category peaks as predicted, but not at the same moment: when the "
                       "total peaked, more pipeline messages' comm_buffers were waiting for the "
                       "neighbouring stage than in the dry run, where messages arrive at once");
        else
            why.append(" the prediction is a dry run of this implementation's step, so a "
                       "difference is a gap in the dry run");
        notes.push_back(why);
    }
    if (stages > 1 && !conversion) {
        pipelineNotes(c, stageStates,
                      perStagePeaks ? o.stagePredicted : std::vector<theory::PeakPrediction>{},
                      stagePeak, notes);
        bubbleNotes(c, o.ranks, notes);
    }
    if (c.sharedDevice)
        notes.push_back(
            "--shared-device: the ranks are threads of one process; collectives copy between their "
            "buffers and always sum in rank order (bitwise equal to MPI's --deterministic "
            "results)");
    else if (c.deterministic)
        notes.push_back("deterministic reductions stage through comm_buffer scratch (alltoall + "
                        "rank-order sum), "
                        "which the prediction includes");
    else if (c.worldSize > 1)
        notes.push_back(
            "MPI's internal reduction buffers are outside the ledger (not counted on either side)");

    if (c.checkpointLearningRate && *c.checkpointLearningRate != c.preset.learningRate) {
        char text[160];
        std::snprintf(text, sizeof text,
                      "--lr %.6g overrides the learning rate the checkpoint was saved with (%.6g)",
                      c.preset.learningRate, *c.checkpointLearningRate);
        notes.push_back(text);
    }
    if (c.keepNvme)
        notes.push_back("--keep-nvme: each rank's NVMe file stays in " + c.nvmeDir +
                        " as shardscope-rank<R>-<pid>.kept.nvme (R: the rank, pid: its process); "
                        "remove them when done");

    r.commBytesPerStep = commPerStep(rank0, c.steps, 0);
    r.commPayloadBytesPerStep = commPerStep(rank0, c.steps, 1);
    r.commCallsPerStep = commPerStep(rank0, c.steps, 2);
    r.paramDigest = digestHex(o.digest);
    r.resumedFrom = o.resumedFrom;
    r.saves = o.saves;
    return r;
}

nlohmann::json buildReport(const RunOutcome& o) {
    return report::toJson(makeReport(o));
}

} // namespace shardscope::train
