// A run report written as JSON (schema shardscope.run/1): the writing side of report.h, apart from
// the bounded reader in report.cpp.
#include "report/report.h"

#include <cmath>

namespace shardscope::report {

namespace {

using nlohmann::json;

json kindsJson(const KindValues& values) {
    json j = json::object();
    for (const auto& [kind, v] : values)
        j[kind] = std::floor(v) == v && v >= 0 && v < 1.8e19 ? json(static_cast<std::uint64_t>(v))
                                                             : json(v);
    return j;
}

json categoriesJson(const CategoryBytes& b, bool statesOnly) {
    json j = json::object();
    for (Category c : kAllCategories)
        if (!statesOnly || stateGroup(c) != StateGroup::Other)
            j[std::string(categoryName(c))] = b[index(c)];
    return j;
}

json tierCategoriesJson(const TierCategoryBytes& b, bool statesOnly, const TierBytes* totals) {
    json j = json::object();
    for (Tier t : kAllTiers) {
        json cells = categoriesJson(b[index(t)], statesOnly);
        if (totals) cells["total"] = (*totals)[index(t)];
        j[std::string(tierName(t))] = std::move(cells);
    }
    return j;
}

json tiersJson(const TierBytes& b) {
    json j = json::object();
    for (Tier t : kAllTiers)
        j[std::string(tierName(t))] = b[index(t)];
    return j;
}

} // namespace

json toJson(const RunReport& r) {
    json ranks = json::array();
    for (const RankReport& rr : r.ranks) {
        json peak = categoriesJson(rr.peakBytes, false);
        peak["total"] = rr.peakTotal;
        json rank = {{"rank", rr.rank},
                     {"peak_bytes", peak},
                     {"model_state_bytes", categoriesJson(rr.modelStateBytes, true)},
                     {"model_state_bytes_by_tier",
                      tierCategoriesJson(rr.modelStateBytesByTier, true, nullptr)},
                     {"peak_bytes_by_tier",
                      tierCategoriesJson(rr.peakBytesByTier, false, &rr.peakTotalByTier)},
                     {"comm_bytes_per_step", kindsJson(rr.commBytesPerStep)},
                     {"exposed_comm",
                      {{"fraction_median", rr.exposedComm.fractionMedian},
                       {"fraction_per_step", rr.exposedComm.fractionPerStep},
                       {"comm_union_ns", rr.exposedComm.commUnionNs},
                       {"exposed_ns", rr.exposedComm.exposedNs},
                       {"step_ns", rr.exposedComm.stepNs}}},
                     {"exposed_transfer",
                      {{"fraction_median", rr.exposedTransfer.fractionMedian},
                       {"fraction_per_step", rr.exposedTransfer.fractionPerStep},
                       {"transfer_union_ns", rr.exposedTransfer.transferUnionNs},
                       {"exposed_ns", rr.exposedTransfer.exposedNs}}}};
        if (rr.checkpointBytesRead > 0) rank["checkpoint_bytes_read"] = rr.checkpointBytesRead;
        if (rr.device) {
            const DeviceMemory& d = *rr.device;
            rank["device"] = {{"name", d.name},
                              {"ordinal", d.ordinal},
                              {"ledger_peak_bytes", d.ledgerPeakBytes},
                              {"pool_used_bytes", d.poolUsedBytes},
                              {"pool_used_high_bytes", d.poolUsedHighBytes},
                              {"pool_reserved_bytes", d.poolReservedBytes},
                              {"pool_reserved_high_bytes", d.poolReservedHighBytes},
                              {"device_total_bytes", d.deviceTotalBytes},
                              {"device_used_bytes", d.deviceUsedBytes},
                              {"outside_ledger_bytes", d.outsideLedgerBytes},
                              {"declared_workspace_bytes", d.declaredWorkspaceBytes}};
        }
        ranks.push_back(std::move(rank));
    }
    const TheoryValues& t = r.theory;
    json out = {
        {"schema", std::string(kRunSchema)},
        {"param_count", r.paramCount},
        {"world_size", r.worldSize},
        {"strategy", r.strategy},
        {"model", r.model},
        {"precision", r.precision},
        {"checkpointing", r.checkpointing},
        {"micro_batch", r.microBatch},
        {"grad_accum", r.gradAccum},
        {"steps", r.steps},
        {"seed", r.seed},
        {"deterministic", r.deterministic},
        {"data", r.data},
        {"config", r.config},
        {"losses", r.losses},
        {"step_ms", r.stepMs},
        {"ranks", ranks},
        {"comm_bytes_per_step", kindsJson(r.commBytesPerStep)},
        {"comm_payload_bytes_per_step", kindsJson(r.commPayloadBytesPerStep)},
        {"comm_calls_per_step", kindsJson(r.commCallsPerStep)},
        {"exposed_comm_fraction", r.exposedCommFraction},
        {"exposed_transfer_fraction", r.exposedTransferFraction},
        {"theory",
         {{"model_state_bytes", categoriesJson(t.modelStateBytes, true)},
          {"ddp_model_state_bytes", categoriesJson(t.ddpModelStateBytes, true)},
          {"padding_bytes", t.paddingBytes},
          {"model_state_bytes_by_tier", tierCategoriesJson(t.modelStateBytesByTier, true, nullptr)},
          {"peak_bytes_by_tier", tiersJson(t.peakBytesByTier)},
          {"predicted_peak_bytes", t.predictedPeakBytes},
          {"peak_at", categoriesJson(t.peakAt, false)},
          {"peak_by_category", categoriesJson(t.peakByCategory, false)},
          {"peak_phase", t.peakPhase},
          {"activation_peak_bytes", t.activationPeakBytes},
          {"comm_bytes_per_step", kindsJson(t.commBytesPerStep)},
          {"comm_payload_bytes_per_step", kindsJson(t.commPayloadBytesPerStep)},
          {"comm_calls_per_step", kindsJson(t.commCallsPerStep)},
          {"psi_equivalents", t.psiEquivalents},
          {"notes", t.notes}}},
        {"comparison",
         {{"model_states_equal", r.comparison.modelStatesEqual},
          {"peak_delta_bytes", r.comparison.peakDeltaBytes},
          {"peak_delta_fraction", r.comparison.peakDeltaFraction},
          {"comm_delta_fraction", r.comparison.commDeltaFraction}}},
        {"notes", r.notes},
        {"param_digest", r.paramDigest}};
    if (r.maxAbsDeltaVsDdp) out["max_abs_delta_vs_ddp"] = *r.maxAbsDeltaVsDdp;
    if (!r.gemmEngine.empty()) out["gemm"] = {{"engine", r.gemmEngine}, {"bf16_units", r.bf16Gemm}};
    if (r.resumedFrom)
        out["resumed_from"] = {{"path", r.resumedFrom->path},
                               {"step", r.resumedFrom->step},
                               {"world_size", r.resumedFrom->worldSize},
                               {"strategy", r.resumedFrom->strategy}};
    if (!r.saves.empty()) {
        json saves = json::array();
        for (const SaveRecord& s : r.saves)
            saves.push_back({{"step", s.step},
                             {"path", s.path},
                             {"seconds", s.seconds},
                             {"bytes", s.bytes},
                             {"seconds_blocked", s.secondsBlocked}});
        out["saves"] = saves;
    }
    if (r.configImport) out["config_import"] = toJson(*r.configImport);
    if (!t.stages.empty()) {
        json stages = json::array();
        for (const StageTheoryValues& s : t.stages) {
            json stage = {{"first_unit", s.firstUnit},
                          {"end_unit", s.endUnit},
                          {"model_state_bytes", categoriesJson(s.modelStateBytes, true)},
                          {"ddp_model_state_bytes", categoriesJson(s.ddpModelStateBytes, true)},
                          {"predicted_peak_bytes", s.predictedPeakBytes},
                          {"comm_bytes_per_step", kindsJson(s.commBytesPerStep)}};
            if (!s.chunks.empty()) {
                json chunks = json::array();
                for (const auto& [first, end] : s.chunks)
                    chunks.push_back({first, end});
                stage["chunks"] = std::move(chunks);
            }
            stages.push_back(std::move(stage));
        }
        out["theory"]["stages"] = std::move(stages);
    }
    return out;
}

} // namespace shardscope::report
