#include "run_data.h"

#include <algorithm>
#include <utility>

#include <nlohmann/json.hpp>

#include "core/error.h"

namespace shardscope::widgets {
namespace {

using nlohmann::json;

template <class T> T valueOr(const json& j, const char* key, T fallback) {
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) return fallback;
    try {
        return it->get<T>();
    } catch (const json::exception&) {
        return fallback; // a key of an unexpected type is treated as missing
    }
}

// {"param_shard": 123, …} → bytes by category; unknown category names are ignored.
std::optional<CategoryBytes> categoryBytes(const json& j, const char* key) {
    const auto it = j.find(key);
    if (it == j.end() || !it->is_object()) return std::nullopt;
    CategoryBytes out{};
    for (const auto& [name, value] : it->items()) {
        const auto c = parseCategory(name);
        if (c && value.is_number()) out[index(*c)] = value.get<std::uint64_t>();
    }
    return out;
}

json parseObject(const std::string& text, const char* what) {
    json j = json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object())
        throw Error(ErrorKind::Format, std::string(what) + " is not a JSON object");
    return j;
}

} // namespace

std::string RunInfo::unitName(std::int32_t unit) const {
    if (unit >= 0 && static_cast<std::size_t>(unit) < units.size() && !units[static_cast<std::size_t>(unit)].name.empty())
        return units[static_cast<std::size_t>(unit)].name;
    return "unit " + std::to_string(unit);
}

RunInfo parseRunInfo(const std::string& configJson, int worldSize) {
    const json j = parseObject(configJson, "the handshake's configuration");
    RunInfo info;
    info.configJson = configJson;
    info.strategy = valueOr<std::string>(j, "strategy", "");
    info.worldSize = valueOr<int>(j, "world_size", worldSize);
    info.model = valueOr<std::string>(j, "model", "");
    info.paramCount = valueOr<std::uint64_t>(j, "param_count", 0);
    info.precision = valueOr<std::string>(j, "precision", "");
    info.backend = valueOr<std::string>(j, "backend", "cpu");
    info.sharedDevice = valueOr<bool>(j, "shared_device", false);
    info.steps = valueOr<std::int64_t>(j, "steps", 0);
    if (const auto units = j.find("units"); units != j.end() && units->is_array()) {
        for (const json& u : *units) {
            if (!u.is_object()) continue;
            info.units.push_back({valueOr<std::string>(u, "name", ""), valueOr<std::uint64_t>(u, "params", 0),
                                  valueOr<std::uint64_t>(u, "padded", 0)});
        }
    }
    if (const auto theory = j.find("theory"); theory != j.end() && theory->is_object()) {
        info.theoryModelStates = categoryBytes(*theory, "model_state_bytes");
        info.ddpTheoryModelStates = categoryBytes(*theory, "ddp_model_state_bytes");
        info.predictedPeakBytes = valueOr<std::uint64_t>(*theory, "predicted_peak_bytes", 0);
    }
    if (const auto cap = j.find("capacity_bytes"); cap != j.end() && cap->is_number()) info.capacityBytes = cap->get<std::uint64_t>();
    return info;
}

RunReport parseRunReport(const std::string& text) {
    const json j = parseObject(text, "the run's report");
    RunReport r;
    r.json = text;
    if (const auto losses = j.find("losses"); losses != j.end() && losses->is_array())
        for (const json& l : *losses)
            if (l.is_number()) r.losses.push_back(l.get<double>());
    if (const auto ranks = j.find("ranks"); ranks != j.end() && ranks->is_array()) {
        for (const json& rk : *ranks) {
            if (!rk.is_object()) continue;
            RankReport rr;
            rr.rank = valueOr<int>(rk, "rank", static_cast<int>(r.ranks.size()));
            rr.peakBytes = categoryBytes(rk, "peak_bytes").value_or(CategoryBytes{});
            rr.modelStateBytes = categoryBytes(rk, "model_state_bytes").value_or(CategoryBytes{});
            if (const auto ex = rk.find("exposed_comm"); ex != rk.end() && ex->is_object()) {
                const auto median = ex->find("fraction_median");
                if (median != ex->end() && median->is_number()) {
                    ExposedComm e;
                    e.fractionMedian = median->get<double>();
                    if (const auto per = ex->find("fraction_per_step"); per != ex->end() && per->is_array())
                        for (const json& f : *per)
                            if (f.is_number()) e.fractionPerStep.push_back(f.get<double>());
                    e.commUnionNs = valueOr<std::uint64_t>(*ex, "comm_union_ns", 0);
                    e.exposedNs = valueOr<std::uint64_t>(*ex, "exposed_ns", 0);
                    e.stepNs = valueOr<std::uint64_t>(*ex, "step_ns", 0);
                    rr.exposedComm = std::move(e);
                }
            }
            if (const auto dev = rk.find("device"); dev != rk.end() && dev->is_object()) {
                DeviceReport d;
                d.name = valueOr<std::string>(*dev, "name", "");
                d.ledgerPeakBytes = valueOr<std::uint64_t>(*dev, "ledger_peak_bytes", 0);
                d.poolReservedHighBytes = valueOr<std::uint64_t>(*dev, "pool_reserved_high_bytes", 0);
                d.outsideLedgerBytes = valueOr<std::uint64_t>(*dev, "outside_ledger_bytes", 0);
                rr.device = std::move(d);
            }
            r.ranks.push_back(rr);
        }
    }
    if (const auto comm = j.find("comm_bytes_per_step"); comm != j.end() && comm->is_object())
        for (const auto& [kind, bytes] : comm->items())
            if (bytes.is_number()) r.commBytesPerStep.emplace_back(kind, bytes.get<std::uint64_t>());
    if (const auto theory = j.find("theory"); theory != j.end() && theory->is_object())
        r.theoryModelStates = categoryBytes(*theory, "model_state_bytes");
    r.paramDigest = valueOr<std::string>(j, "param_digest", "");
    if (const auto f = j.find("exposed_comm_fraction"); f != j.end() && f->is_number()) {
        r.exposedCommFraction = f->get<double>();
    } else {
        // Older top level, newer ranks: the rank that waits most, as the worker defines it.
        for (const RankReport& rr : r.ranks)
            if (rr.exposedComm) r.exposedCommFraction = std::max(r.exposedCommFraction.value_or(0.0), rr.exposedComm->fractionMedian);
    }
    return r;
}

void applyEvent(RankState& s, const Event& e) {
    s.step = e.step;
    switch (e.kind) {
    case EventKind::Alloc:
        s.live.at(e.category, e.tier) += e.bytes;
        s.liveTotal += e.bytes;
        if (s.liveTotal > s.peakTotal) s.peakTotal = s.liveTotal;
        if (e.category == Category::ParamFull && e.unit >= 0 && static_cast<std::size_t>(e.unit) < kTrackedUnits)
            ++s.gathered[static_cast<std::size_t>(e.unit)];
        break;
    case EventKind::Free: {
        std::uint64_t& cell = s.live.at(e.category, e.tier);
        const std::uint64_t freed = e.bytes < cell ? e.bytes : cell;
        cell -= freed;
        s.liveTotal -= freed;
        if (e.category == Category::ParamFull && e.unit >= 0 && static_cast<std::size_t>(e.unit) < kTrackedUnits) {
            std::uint16_t& n = s.gathered[static_cast<std::size_t>(e.unit)];
            if (n > 0) --n;
        }
        break;
    }
    case EventKind::ComputeBegin:
        s.computeUnit = e.unit;
        s.phase = e.phase;
        break;
    case EventKind::ComputeEnd:
        s.computeUnit = kNoUnit;
        s.phase = Phase::None;
        break;
    case EventKind::CollectiveBegin:
        if (s.collective != CollectiveOp::None) {
            s.outerUnit = s.collectiveUnit;
            s.outerCollective = s.collective;
            s.outerBytes = s.collectiveBytes;
        }
        s.collectiveUnit = e.unit;
        s.collective = e.collective;
        s.collectiveBytes = e.bytes;
        break;
    case EventKind::CollectiveEnd:
        s.collectiveUnit = std::exchange(s.outerUnit, kNoUnit);
        s.collective = std::exchange(s.outerCollective, CollectiveOp::None);
        s.collectiveBytes = std::exchange(s.outerBytes, 0);
        break;
    case EventKind::StepBegin:
    case EventKind::StepEnd:
        break;
    }
}

} // namespace shardscope::widgets
