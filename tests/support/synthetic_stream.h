#pragma once
// Event streams built with the protocol's public codec (protocol::writeHeader/writeRecord) in
// the shape a ZeRO-3 worker sends: per-unit shards and optimizer state at setup, then per step
// all-gather → compute → free for each unit in forward and backward, reduce-scatter of the
// gradients, the optimizer step. For tests and benchmarks of the GUI's decode and replay; the
// real worker's recordings (tests/data/*.sstrace) are checked by the same tests.
#include "protocol/protocol.h"
#include "report/report.h"

#include <algorithm>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

namespace shardscope::testing {

struct SyntheticRun {
    int ranks = 2;
    int units = 4;
    int steps = 2;
    std::uint64_t unitParams = 10007; // not divisible by small N: shards are padded
    std::uint64_t activationBytes = 50000;
    bool withReport = true;
    bool withEnd = true;
    int failRank = -1; // ≥ 0: that rank reports an out-of-memory failure in the last step
};

inline std::uint64_t paddedParams(const SyntheticRun& r) {
    const auto n = static_cast<std::uint64_t>(r.ranks);
    return (r.unitParams + n - 1) / n * n;
}

inline std::string syntheticConfig(const SyntheticRun& r) {
    const std::uint64_t shard = paddedParams(r) / static_cast<std::uint64_t>(r.ranks);
    const auto u = static_cast<std::uint64_t>(r.units);
    const std::uint64_t full = paddedParams(r) * u;
    std::ostringstream j;
    j << "{\"strategy\":\"zero3\",\"world_size\":" << r.ranks
      << ",\"model\":\"synthetic\",\"param_count\":" << r.unitParams * u
      << ",\"precision\":\"bf16\",\"steps\":" << r.steps << ",\"units\":[";
    for (int i = 0; i < r.units; ++i)
        j << (i ? "," : "") << "{\"name\":\"block" << i << "\",\"params\":" << r.unitParams
          << ",\"padded\":" << paddedParams(r) << "}";
    j << "],\"theory\":{\"model_state_bytes\":{\"param_shard\":" << 2 * shard * u
      << ",\"grad_shard\":" << 2 * shard * u << ",\"master_fp32\":" << 4 * shard * u
      << ",\"adam_m\":" << 4 * shard * u << ",\"adam_v\":" << 4 * shard * u
      << "},\"ddp_model_state_bytes\":{\"param_full\":" << 2 * full << ",\"grad_full\":" << 2 * full
      << ",\"master_fp32\":" << 4 * full << ",\"adam_m\":" << 4 * full << ",\"adam_v\":" << 4 * full
      << "},\"predicted_peak_bytes\":"
      << 16 * shard * u + 4 * paddedParams(r) + u * r.activationBytes
      << "},\"capacity_bytes\":null,\"some_future_knob\":7}";
    return j.str();
}

// One rank's events of one step (step 0 also carries the setup allocations).
inline std::vector<Event> syntheticEvents(const SyntheticRun& r, int rank, int step,
                                          std::uint64_t& clock) {
    std::vector<Event> ev;
    const std::uint64_t padded = paddedParams(r);
    const std::uint64_t shard = padded / static_cast<std::uint64_t>(r.ranks);
    auto add = [&](EventKind k, Category c, std::uint64_t bytes, int unit, Phase ph = Phase::None,
                   CollectiveOp op = CollectiveOp::None) {
        Event e;
        clock +=
            1000 + static_cast<std::uint64_t>(rank) * 7 + static_cast<std::uint64_t>(unit + 1) * 13;
        e.timeNs = clock;
        e.rank = rank;
        e.kind = k;
        e.category = c;
        e.bytes = bytes;
        e.unit = unit;
        e.phase = ph;
        e.collective = op;
        e.peers = (op != CollectiveOp::None) ? r.ranks : 0;
        e.step = step;
        ev.push_back(e);
    };
    if (step == 0)
        for (int u = 0; u < r.units; ++u) {
            add(EventKind::Alloc, Category::ParamShard, 2 * shard, u);
            add(EventKind::Alloc, Category::MasterFp32, 4 * shard, u);
            add(EventKind::Alloc, Category::AdamM, 4 * shard, u);
            add(EventKind::Alloc, Category::AdamV, 4 * shard, u);
            add(EventKind::Alloc, Category::GradShard, 2 * shard,
                u); // persistent: reduce-scatter accumulates here
        }
    add(EventKind::StepBegin, Category::Workspace, 0, kNoUnit);
    auto gather = [&](int u) {
        add(EventKind::CollectiveBegin, Category::CommBuffer, 2 * padded, u, Phase::None,
            CollectiveOp::AllGather);
        add(EventKind::Alloc, Category::ParamFull, 2 * padded, u);
        add(EventKind::CollectiveEnd, Category::CommBuffer, 2 * padded, u, Phase::None,
            CollectiveOp::AllGather);
    };
    for (int u = 0; u < r.units; ++u) {
        gather(u);
        add(EventKind::ComputeBegin, Category::Workspace, 0, u, Phase::Forward);
        add(EventKind::Alloc, Category::Activation, r.activationBytes, u);
        add(EventKind::ComputeEnd, Category::Workspace, 0, u, Phase::Forward);
        add(EventKind::Free, Category::ParamFull, 2 * padded, u);
    }
    for (int u = r.units - 1; u >= 0; --u) {
        gather(u);
        add(EventKind::ComputeBegin, Category::Workspace, 0, u, Phase::Backward);
        add(EventKind::Alloc, Category::GradFull, 2 * padded, u);
        add(EventKind::Free, Category::Activation, r.activationBytes, u);
        add(EventKind::ComputeEnd, Category::Workspace, 0, u, Phase::Backward);
        add(EventKind::Free, Category::ParamFull, 2 * padded, u);
        add(EventKind::CollectiveBegin, Category::CommBuffer, 2 * padded, u, Phase::None,
            CollectiveOp::ReduceScatter);
        add(EventKind::Alloc, Category::CommBuffer, 2 * shard, u);
        add(EventKind::CollectiveEnd, Category::CommBuffer, 2 * padded, u, Phase::None,
            CollectiveOp::ReduceScatter);
        add(EventKind::Free, Category::CommBuffer, 2 * shard, u);
        add(EventKind::Free, Category::GradFull, 2 * padded, u);
    }
    add(EventKind::ComputeBegin, Category::Workspace, 0, kNoUnit, Phase::Optimizer);
    add(EventKind::ComputeEnd, Category::Workspace, 0, kNoUnit, Phase::Optimizer);
    add(EventKind::StepEnd, Category::Workspace, 0, kNoUnit);
    return ev;
}

inline std::string syntheticStream(const SyntheticRun& r) {
    std::string out;
    protocol::writeHeader(out);
    const std::string config = syntheticConfig(r);
    for (int rank = 0; rank < r.ranks; ++rank)
        protocol::writeRecord(out, protocol::Handshake{rank, r.ranks, config});
    std::uint64_t start = 1'000'000;
    for (int step = 0; step < r.steps; ++step) {
        const bool failing = r.failRank >= 0 && step == r.steps - 1;
        std::uint64_t end = start;
        for (int rank = 0; rank < r.ranks; ++rank) {
            std::uint64_t clock = start + static_cast<std::uint64_t>(rank) * 50;
            auto events = syntheticEvents(r, rank, step, clock);
            if (failing && rank == r.failRank)
                events.resize(events.size() / 3); // died a third of the way in
            protocol::writeRecord(out, protocol::EventBatch{rank, std::move(events)});
            end = std::max(end, clock);
        }
        if (failing) {
            protocol::writeRecord(
                out,
                protocol::Failure{r.failRank, step,
                                  "out of memory: activation of block1 needs 50000 bytes, 4000 of "
                                  "capacity 120000 free"});
            return out;
        }
        protocol::writeRecord(out, protocol::StepSummary{step, 5.0 - 0.5 * step, end - start});
        start = end + 5'000'000; // idle time between steps: the replay skips it
    }
    if (r.withReport) { // as the worker writes it (report::toJson)
        report::RunReport rep;
        rep.paramCount = r.unitParams * static_cast<std::uint64_t>(r.units);
        rep.worldSize = r.ranks;
        rep.strategy = "zero3";
        rep.steps = r.steps;
        rep.losses = {5.0, 4.5};
        // Model states as syntheticConfig's theory has them (ZeRO-3: everything sharded).
        const std::uint64_t stateShard = paddedParams(r) / static_cast<std::uint64_t>(r.ranks) *
                                         static_cast<std::uint64_t>(r.units);
        report::CategoryBytes states{};
        states[index(Category::ParamShard)] = 2 * stateShard;
        states[index(Category::GradShard)] = 2 * stateShard;
        for (Category c : {Category::MasterFp32, Category::AdamM, Category::AdamV})
            states[index(c)] = 4 * stateShard;
        rep.theory.modelStateBytes = states;
        rep.ranks.resize(static_cast<std::size_t>(r.ranks));
        for (int rank = 0; rank < r.ranks; ++rank) {
            rep.ranks[static_cast<std::size_t>(rank)].rank = rank;
            rep.ranks[static_cast<std::size_t>(rank)].modelStateBytes = states;
        }
        rep.paramDigest = "abc";
        protocol::writeRecord(out, protocol::Report{report::toJson(rep).dump()});
    }
    if (r.withEnd) protocol::writeRecord(out, protocol::End{});
    return out;
}

} // namespace shardscope::testing
