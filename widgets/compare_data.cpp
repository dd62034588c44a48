#include "compare_data.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "core/error.h"

namespace shardscope::widgets {
namespace {

using nlohmann::json;

[[noreturn]] void bad(const std::string& what) { throw Error(ErrorKind::Format, "compare: " + what); }

CategoryBytes categories(const json& j) {
    CategoryBytes out{};
    if (!j.is_object()) return out;
    for (const auto& [name, value] : j.items())
        if (const auto c = parseCategory(name); c && value.is_number())
            out[index(*c)] = static_cast<std::uint64_t>(std::llround(value.get<double>()));
    return out;
}

std::vector<std::pair<std::string, double>> kinds(const json& j) {
    std::vector<std::pair<std::string, double>> out;
    if (!j.is_object()) return out;
    for (const auto& [name, value] : j.items())
        if (value.is_number()) out.emplace_back(name, value.get<double>());
    return out;
}

double sum(const std::vector<std::pair<std::string, double>>& v) {
    double s = 0;
    for (const auto& [k, b] : v) s += b;
    return s;
}

CompareRun fromJson(const json& j) {
    if (!j.is_object()) bad("a report is not a JSON object");
    CompareRun r;
    const auto strategy = j.find("strategy");
    if (strategy == j.end() || !strategy->is_string()) bad("a report has no \"strategy\"");
    r.strategy = strategy->get<std::string>();
    r.model = j.value("model", std::string());
    r.worldSize = j.value("world_size", 1);
    const auto ranks = j.find("ranks");
    if (ranks == j.end() || !ranks->is_array() || ranks->empty()) bad("the " + r.strategy + " report has no \"ranks\"");
    for (const json& rk : *ranks) {
        if (!rk.is_object()) bad("the " + r.strategy + " report has a rank that is not an object");
        CompareRank cr;
        cr.rank = rk.value("rank", static_cast<int>(r.ranks.size()));
        if (const auto p = rk.find("peak_bytes"); p != rk.end() && p->is_object()) {
            cr.peak = categories(*p);
            if (const auto t = p->find("total"); t != p->end() && t->is_number()) cr.peakTotal = t->get<std::uint64_t>();
        }
        if (cr.peakTotal == 0) { // older reports: the top-level key, or the sum of the peaks
            cr.peakTotal = rk.value("peak_total_bytes", std::uint64_t{0});
            if (cr.peakTotal == 0)
                for (auto b : cr.peak) cr.peakTotal += b;
        }
        if (const auto m = rk.find("model_state_bytes"); m != rk.end()) cr.modelStates = categories(*m);
        if (const auto c = rk.find("comm_bytes_per_step"); c != rk.end()) cr.commBytes = sum(kinds(*c));
        if (const auto e = rk.find("exposed_comm"); e != rk.end() && e->is_object())
            if (const auto m = e->find("fraction_median"); m != e->end() && m->is_number()) cr.exposedComm = m->get<double>();
        r.ranks.push_back(cr);
    }
    if (const auto c = j.find("comm_bytes_per_step"); c != j.end()) r.comm = kinds(*c);
    if (const auto t = j.find("theory"); t != j.end() && t->is_object()) {
        if (const auto m = t->find("model_state_bytes"); m != t->end() && m->is_object()) r.theoryModelStates = categories(*m);
        r.theoryPeak = t->value("predicted_peak_bytes", t->value("peak_bytes", std::uint64_t{0}));
        if (const auto c = t->find("comm_bytes_per_step"); c != t->end()) r.theoryComm = kinds(*c);
    }
    for (const CompareRank& cr : r.ranks)
        if (cr.exposedComm && (!r.exposedComm || *cr.exposedComm > *r.exposedComm)) {
            r.exposedComm = cr.exposedComm;
            r.exposedRank = cr.rank;
        }
    if (const auto e = j.find("exposed_comm_fraction"); e != j.end() && e->is_number()) {
        r.exposedComm = e->get<double>();
        const auto same = std::find_if(r.ranks.begin(), r.ranks.end(), [&r](const CompareRank& c) {
            return c.exposedComm && std::abs(*c.exposedComm - *r.exposedComm) < 1e-12;
        });
        r.exposedRank = same != r.ranks.end() ? same->rank : -1;
    }
    r.paramDigest = j.value("param_digest", std::string());
    if (const auto d = j.find("max_abs_delta_vs_ddp"); d != j.end() && d->is_number()) r.maxAbsDeltaVsDdp = d->get<double>();
    return r;
}

} // namespace

double CompareRun::commTotal() const { return sum(comm); }
double CompareRun::theoryCommTotal() const { return sum(theoryComm); }
std::uint64_t CompareRun::peakMax() const {
    std::uint64_t m = 0;
    for (const auto& r : ranks) m = std::max(m, r.peakTotal);
    return m;
}

CompareRun parseCompareRun(const std::string& text) {
    const json j = json::parse(text, nullptr, false);
    if (j.is_discarded()) bad("the report is not valid JSON");
    return fromJson(j);
}

std::vector<CompareRun> parseCompareRuns(const std::string& text) {
    const json j = json::parse(text, nullptr, false);
    if (j.is_discarded()) bad("the file is not valid JSON");
    const json* list = &j;
    // shardscope-cli compare --json: {"ranks": N, "deterministic": …, "strategies": [report…]}.
    if (j.is_object() && j.contains("strategies") && j["strategies"].is_array()) list = &j["strategies"];
    else if (j.is_object() && j.contains("runs")) list = &j["runs"];
    std::vector<CompareRun> out;
    if (list->is_array()) {
        for (const json& r : *list) out.push_back(fromJson(r));
    } else {
        out.push_back(fromJson(*list));
    }
    if (out.empty()) bad("no runs in the file");
    return out;
}

Parity parityOf(const CompareRun& run, const std::vector<CompareRun>& all) {
    if (run.strategy == "ddp") return {Parity::Kind::Reference, 0};
    if (run.maxAbsDeltaVsDdp)
        return {*run.maxAbsDeltaVsDdp == 0 ? Parity::Kind::BitwiseEqual : Parity::Kind::Delta, *run.maxAbsDeltaVsDdp};
    const auto ddp = std::find_if(all.begin(), all.end(), [](const CompareRun& r) { return r.strategy == "ddp"; });
    if (ddp == all.end() || ddp->paramDigest.empty() || run.paramDigest.empty()) return {};
    // Equal digests of the fp32 master weights: bitwise equal (up to a 64-bit hash collision).
    return {ddp->paramDigest == run.paramDigest ? Parity::Kind::DigestEqual : Parity::Kind::DigestDiffers, 0};
}

} // namespace shardscope::widgets
