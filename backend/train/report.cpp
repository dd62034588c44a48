#include "train/report.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <unistd.h>
#include <filesystem>

#include "core/error.h"
#include "theory/activations.h"

namespace shardscope::train {

namespace {

template <class T> void put(std::string& out, const T& v) { out.append(reinterpret_cast<const char*>(&v), sizeof(T)); }
template <class T> T take(const std::string& in, std::size_t& at) {
    if (at + sizeof(T) > in.size()) throw Error(ErrorKind::Format, "rank result is truncated");
    T v;
    std::memcpy(&v, in.data() + at, sizeof(T));
    at += sizeof(T);
    return v;
}

void putTable(std::string& out, const ByteTable& t) {
    for (const auto& row : t.bytes)
        for (std::uint64_t v : row) put(out, v);
}
ByteTable takeTable(const std::string& in, std::size_t& at) {
    ByteTable t;
    for (auto& row : t.bytes)
        for (std::uint64_t& v : row) v = take<std::uint64_t>(in, at);
    return t;
}

double perStep(std::uint64_t total, std::int64_t steps) {
    return steps > 0 ? static_cast<double>(total) / static_cast<double>(steps) : 0.0;
}

nlohmann::json commJson(const comm::CommStats& s, std::int64_t steps, int which) {
    nlohmann::json j = nlohmann::json::object();
    for (std::size_t op = 1; op < kCollectiveOpCount; ++op) { // 0 is CollectiveOp::None
        if (s.calls[op] == 0) continue;
        const std::uint64_t v = which == 0 ? s.sentBytes[op] : which == 1 ? s.payloadBytes[op] : s.calls[op];
        const double ps = perStep(v, steps);
        j[std::string(collectiveOpName(static_cast<CollectiveOp>(op)))] = std::floor(ps) == ps ? nlohmann::json(static_cast<std::uint64_t>(ps)) : nlohmann::json(ps);
    }
    return j;
}

nlohmann::json exposedCommJson(const std::vector<StepOverlap>& steps) {
    const OverlapSummary s = summarize(steps);
    nlohmann::json perStep = nlohmann::json::array();
    for (const StepOverlap& o : steps) perStep.push_back(o.fraction());
    return {{"fraction_median", s.medianFraction},
            {"fraction_per_step", perStep},
            {"comm_union_ns", s.commUnionNs},
            {"exposed_ns", s.exposedNs},
            {"step_ns", s.stepNs}};
}

nlohmann::json deviceJson(const DeviceMemory& d) {
    return {{"name", d.name},
            {"ordinal", d.ordinal},
            {"ledger_peak_bytes", d.ledgerPeak},
            {"pool_used_bytes", d.poolUsed},
            {"pool_used_high_bytes", d.poolUsedHigh},
            {"pool_reserved_bytes", d.poolReserved},
            {"pool_reserved_high_bytes", d.poolReservedHigh},
            {"device_total_bytes", d.deviceTotal},
            {"device_used_bytes", d.deviceUsed},
            {"outside_ledger_bytes", d.outsideLedger},
            {"declared_workspace_bytes", d.declaredWorkspace}};
}

std::string mib(double bytes) {
    char text[48];
    std::snprintf(text, sizeof(text), "%.3f MiB", bytes / 1048576.0);
    return text;
}

} // namespace

std::string encodeRankResult(const RankResult& r) {
    std::string out;
    put(out, r.rank);
    putTable(out, r.peak);
    put(out, r.peakTotal);
    putTable(out, r.modelStates);
    for (const auto* arr : {&r.comm.calls, &r.comm.payloadBytes, &r.comm.sentBytes, &r.comm.busyNs})
        for (std::uint64_t v : *arr) put(out, v);
    put(out, static_cast<std::uint64_t>(r.overlap.size()));
    for (const StepOverlap& o : r.overlap) {
        put(out, o.stepNs);
        put(out, o.commUnionNs);
        put(out, o.exposedNs);
    }
    put(out, static_cast<std::uint8_t>(r.device ? 1 : 0));
    if (r.device) {
        const DeviceMemory& d = *r.device;
        put(out, static_cast<std::uint64_t>(d.name.size()));
        out += d.name;
        put(out, d.ordinal);
        for (std::uint64_t v : {d.ledgerPeak, d.poolUsed, d.poolUsedHigh, d.poolReserved, d.poolReservedHigh,
                                d.deviceTotal, d.deviceUsed, d.outsideLedger, d.declaredWorkspace})
            put(out, v);
    }
    return out;
}

RankResult decodeRankResult(const std::string& in) {
    RankResult r;
    std::size_t at = 0;
    r.rank = take<std::int32_t>(in, at);
    r.peak = takeTable(in, at);
    r.peakTotal = take<std::uint64_t>(in, at);
    r.modelStates = takeTable(in, at);
    for (auto* arr : {&r.comm.calls, &r.comm.payloadBytes, &r.comm.sentBytes, &r.comm.busyNs})
        for (std::uint64_t& v : *arr) v = take<std::uint64_t>(in, at);
    const auto steps = take<std::uint64_t>(in, at);
    // Each step is three u64s: a count that the remaining bytes cannot hold is corrupt (and must
    // not drive a huge reserve).
    if (steps > (in.size() - at) / (3 * sizeof(std::uint64_t)))
        throw Error(ErrorKind::Format, "rank result is truncated");
    for (std::uint64_t k = 0; k < steps; ++k) {
        StepOverlap o;
        o.stepNs = take<std::uint64_t>(in, at);
        o.commUnionNs = take<std::uint64_t>(in, at);
        o.exposedNs = take<std::uint64_t>(in, at);
        r.overlap.push_back(o);
    }
    if (take<std::uint8_t>(in, at) != 0) {
        DeviceMemory d;
        const auto nameBytes = take<std::uint64_t>(in, at);
        if (nameBytes > in.size() - at) throw Error(ErrorKind::Format, "rank result is truncated");
        d.name = in.substr(at, static_cast<std::size_t>(nameBytes));
        at += static_cast<std::size_t>(nameBytes);
        d.ordinal = take<std::int32_t>(in, at);
        for (std::uint64_t* v : {&d.ledgerPeak, &d.poolUsed, &d.poolUsedHigh, &d.poolReserved, &d.poolReservedHigh,
                                 &d.deviceTotal, &d.deviceUsed, &d.outsideLedger, &d.declaredWorkspace})
            *v = take<std::uint64_t>(in, at);
        r.device = d;
    }
    if (at != in.size()) throw Error(ErrorKind::Format, "rank result has trailing bytes");
    return r;
}

nlohmann::json stateBytesJson(const ByteTable& table) {
    nlohmann::json j = nlohmann::json::object();
    for (Category c : kAllCategories)
        if (stateGroup(c) != StateGroup::Other) j[std::string(categoryName(c))] = table.category(c);
    return j;
}

nlohmann::json categoryBytesJson(const ByteTable& table) {
    nlohmann::json j = nlohmann::json::object();
    for (Category c : kAllCategories) j[std::string(categoryName(c))] = table.category(c);
    return j;
}

nlohmann::json handshakeJson(const RunConfig& config, const std::vector<model::UnitLayout>& units) {
    nlohmann::json j = toJson(config);
    const theory::Scenario s = scenarioOf(config);
    const theory::ModelStates states = theory::modelStates(s);
    theory::Scenario ddp = s;
    ddp.strategy = theory::Strategy::Ddp;
    const auto shards = static_cast<std::uint64_t>(theory::shardCount(s));
    nlohmann::json list = nlohmann::json::array();
    std::uint64_t params = 0;
    for (const auto& u : units) {
        list.push_back({{"name", u.name()}, {"params", u.elements()}, {"padded", u.paddedElements(shards)}});
        params += u.elements();
    }
    j["param_count"] = params;
    j["units"] = list;
    j["theory"] = {{"model_state_bytes", stateBytesJson(states.perRank)},
                   {"ddp_model_state_bytes", stateBytesJson(theory::modelStates(ddp).perRank)},
                   {"predicted_peak_bytes", theory::predictPeak(s).peakBytes}};
    return j;
}

nlohmann::json buildReport(const RunOutcome& o) {
    const RunConfig& c = o.config;
    const theory::Scenario s = scenarioOf(c);
    const theory::ModelStates states = theory::modelStates(s);
    const theory::PeakPrediction peak = theory::predictPeak(s);
    const theory::CommPerStep comm = theory::commPerStep(s);
    theory::Scenario ddpScenario = s;
    ddpScenario.strategy = theory::Strategy::Ddp;

    nlohmann::json ranks = nlohmann::json::array();
    bool statesEqual = true;
    std::uint64_t peakMax = 0;
    double exposedMax = 0.0;
    for (const RankResult& r : o.ranks) {
        nlohmann::json peakJson = categoryBytesJson(r.peak);
        peakJson["total"] = r.peakTotal;
        nlohmann::json rank = {{"rank", r.rank},
                               {"peak_bytes", peakJson},
                               {"model_state_bytes", stateBytesJson(r.modelStates)},
                               {"comm_bytes_per_step", commJson(r.comm, c.steps, 0)},
                               {"exposed_comm", exposedCommJson(r.overlap)}};
        if (r.device) rank["device"] = deviceJson(*r.device);
        ranks.push_back(rank);
        exposedMax = std::max(exposedMax, summarize(r.overlap).medianFraction);
        statesEqual = statesEqual && r.modelStates == states.perRank;
        peakMax = std::max(peakMax, r.peakTotal);
    }

    nlohmann::json theoryComm = nlohmann::json::object(), theoryPayload = nlohmann::json::object(),
                   theoryCalls = nlohmann::json::object();
    for (const theory::CommVolume& v : comm.byKind) {
        const std::string k(collectiveOpName(v.kind));
        theoryComm[k] = v.sentBytes;
        theoryPayload[k] = v.payloadBytes;
        theoryCalls[k] = v.calls;
    }
    nlohmann::json theoryJson = {
        {"model_state_bytes", stateBytesJson(states.perRank)},
        {"ddp_model_state_bytes", stateBytesJson(theory::modelStates(ddpScenario).perRank)},
        {"padding_bytes", states.paddingBytes},
        {"predicted_peak_bytes", peak.peakBytes},
        {"peak_at", categoryBytesJson(peak.atPeak)},
        {"peak_by_category", categoryBytesJson(peak.categoryPeaks)},
        {"peak_phase", peak.peakPhase},
        {"activation_peak_bytes", peak.activationBytes},
        {"comm_bytes_per_step", theoryComm},
        {"comm_payload_bytes_per_step", theoryPayload},
        {"comm_calls_per_step", theoryCalls},
        {"psi_equivalents", comm.psiEquivalents},
        {"notes", peak.notes}};

    // How measurement and prediction compare, and why they differ where they do.
    nlohmann::json notes = nlohmann::json::array();
    const comm::CommStats& rank0 = o.ranks.empty() ? comm::CommStats{} : o.ranks.front().comm;
    const double measuredSent = perStep(rank0.totalSentBytes(), c.steps);
    const double commDelta = comm.totalSentBytes > 0
                                 ? (measuredSent - static_cast<double>(comm.totalSentBytes)) / static_cast<double>(comm.totalSentBytes)
                                 : measuredSent;
    const auto peakDelta = static_cast<std::int64_t>(peakMax) - static_cast<std::int64_t>(peak.peakBytes);
    const double peakFraction = peak.peakBytes > 0 ? static_cast<double>(peakDelta) / static_cast<double>(peak.peakBytes) : 0.0;
    if (!statesEqual) notes.push_back("model states differ from theory::modelStates (a bug: they are modelled byte for byte)");
    if (peakDelta == 0) {
        std::string same = "measured peak equals the predicted peak byte for byte (";
        same.append(mib(static_cast<double>(peakMax))).append(", ").append(peak.peakPhase).append(")");
        notes.push_back(same);
    } else {
        std::string why = "measured peak ";
        why.append(mib(static_cast<double>(peakMax))).append(" vs predicted ");
        why.append(mib(static_cast<double>(peak.peakBytes))).append(" (");
        if (peakDelta > 0) why.push_back('+');
        why.append(std::to_string(peakDelta)).append(" B):");
        if (!o.ranks.empty())
            for (Category cat : kAllCategories) {
                const auto m = static_cast<std::int64_t>(o.ranks.front().peak.category(cat));
                const auto t = static_cast<std::int64_t>(peak.categoryPeaks.category(cat));
                if (m != t) why.append(" ").append(categoryName(cat)).append(" peak ").append(std::to_string(m - t)).append(" B;");
            }
        why.append(" the prediction replays this implementation's allocations, so a difference is a model gap");
        notes.push_back(why);
    }
    if (c.sharedDevice)
        notes.push_back("--shared-device: the ranks are threads of one process; collectives copy between their "
                        "buffers and always sum in rank order (bitwise equal to MPI's --deterministic results)");
    else if (c.deterministic)
        notes.push_back("deterministic reductions stage through comm_buffer scratch (alltoall + rank-order sum), "
                        "which the prediction includes");
    else if (c.worldSize > 1)
        notes.push_back("MPI's internal reduction buffers are outside the ledger (not counted on either side)");

    nlohmann::json losses = o.losses, stepMs = o.stepMs;
    return {{"param_count", o.paramCount},
            {"world_size", c.worldSize},
            {"strategy", std::string(theory::strategyName(c.strategy))},
            {"model", c.preset.name},
            {"precision", std::string(theory::precisionName(c.precision))},
            {"checkpointing", c.checkpointing},
            {"micro_batch", c.preset.microBatch},
            {"grad_accum", c.knobs.gradAccumSteps},
            {"steps", c.steps},
            {"seed", c.seed},
            {"deterministic", c.deterministic},
            {"data", c.dataFile ? *c.dataFile : std::string("synthetic")},
            {"config", toJson(c)},
            {"losses", losses},
            {"step_ms", stepMs},
            {"ranks", ranks},
            {"comm_bytes_per_step", commJson(rank0, c.steps, 0)},
            {"comm_payload_bytes_per_step", commJson(rank0, c.steps, 1)},
            {"comm_calls_per_step", commJson(rank0, c.steps, 2)},
            {"exposed_comm_fraction", exposedMax},
            {"theory", theoryJson},
            {"comparison",
             {{"model_states_equal", statesEqual},
              {"peak_delta_bytes", peakDelta},
              {"peak_delta_fraction", peakFraction},
              {"comm_delta_fraction", commDelta}}},
            {"notes", notes},
            {"param_digest", digestHex(o.digest)}};
}

void writeTextFile(const std::string& path, const std::string& text, const std::string& flag) {
    const std::string tmp = path + ".tmp." + std::to_string(static_cast<long long>(::getpid()));
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        out.write(text.data(), static_cast<std::streamsize>(text.size()));
        out.flush();
        if (!out) {
            std::error_code ec;
            std::filesystem::remove(tmp, ec);
            throw Error(ErrorKind::Io, flag + ": cannot write '" + path + "'");
        }
    }
    std::error_code ec;
    std::filesystem::rename(tmp, path, ec);
    if (ec) {
        std::filesystem::remove(tmp, ec);
        throw Error(ErrorKind::Io, flag + ": cannot create '" + path + "'");
    }
}

void writeWeightsFile(const std::string& path, const std::vector<std::vector<float>>& weights) {
    static_assert(std::endian::native == std::endian::little, "weights files are little-endian");
    std::string bytes;
    for (const auto& unit : weights)
        bytes.append(reinterpret_cast<const char*>(unit.data()), unit.size() * sizeof(float));
    writeTextFile(path, bytes, "--weights-out");
}

std::vector<float> readWeightsFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error(ErrorKind::Io, "cannot read weights file '" + path + "'");
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (bytes.size() % sizeof(float) != 0)
        throw Error(ErrorKind::Format, "weights file '" + path + "' is not a whole number of fp32 values");
    std::vector<float> out(bytes.size() / sizeof(float));
    std::memcpy(out.data(), bytes.data(), bytes.size());
    return out;
}

double maxAbsDelta(const std::vector<float>& a, const std::vector<float>& b) {
    if (a.size() != b.size())
        throw Error(ErrorKind::Format, "weights of different sizes (" + std::to_string(a.size()) + " vs " +
                                           std::to_string(b.size()) + " values)");
    double worst = 0.0;
    for (std::size_t i = 0; i < a.size(); ++i)
        worst = std::max(worst, std::fabs(static_cast<double>(a[i]) - static_cast<double>(b[i])));
    return worst;
}

} // namespace shardscope::train
