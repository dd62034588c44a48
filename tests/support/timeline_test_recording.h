#pragma once
// Test recordings for the timeline, flows, playback and explain tests and the timeline
// benchmark: the byte stream a ZeRO-3 (or DDP) job writes, built with the real protocol
// encoder, then decoded and assembled exactly as the GUI does when it opens a .sstrace.
//
// The per-unit sequences follow the trainer and communicator (backend/train, backend/comm):
// collective payload = the full flat buffer (shard × N); ZeRO-3 forward: alloc param_full →
// all-gather → compute → free param_full; backward: alloc param_full → all-gather → compute
// (alloc grad_full) → free param_full → reduce-scatter → free grad_full; optimizer on shards.
#include "protocol/protocol.h"
#include "replay/replay_model.h"
#include "replay/stream_assembler.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace shardscope::testrec {

struct Spec {
    int ranks = 4;
    int units = 4; // embedding, block0 … , head
    int steps = 1;
    int activationsPerUnit = 3; // activation buffers each forward keeps for backward
    std::uint64_t unitParams = 300000;
    bool ddp = false; // full replicas + all-reduce of each unit's gradient
    // ZeRO-1: full replicas, sharded optimizer; one reduce-scatter of a bucket spanning every
    // unit after backward and one all-gather of the updated parameters after the optimizer.
    bool zero1 = false;
    // DDP with one all-reduce of a bucket spanning every unit after backward (no unit named).
    bool fusedAllReduce = false;
    std::uint64_t skewNs = 37; // rank r starts r × skew later (ranks are never in lockstep)
};

inline std::uint64_t paddedParams(const Spec& s) {
    const auto n = static_cast<std::uint64_t>(s.ranks);
    return (s.unitParams + n - 1) / n * n;
}
inline std::uint64_t fullBytes(const Spec& s) {
    return paddedParams(s) * 2;
} // bf16
inline std::uint64_t shardBytes(const Spec& s) {
    return fullBytes(s) / static_cast<std::uint64_t>(s.ranks);
}
inline std::string unitName(int u, int units) {
    if (u == 0) return "embedding";
    if (u == units - 1) return "head";
    return "block" + std::to_string(u - 1);
}

class RankWriter {
public:
    RankWriter(int rank, std::uint64_t t0) : rank_(rank), t_(t0) {}
    std::vector<Event> events;
    std::int64_t step = 0;

    Event& add(EventKind k, std::uint64_t dt) {
        t_ += dt;
        Event e;
        e.timeNs = t_;
        e.rank = rank_;
        e.kind = k;
        e.step = step;
        events.push_back(e);
        return events.back();
    }
    void alloc(Category c, std::uint64_t bytes, int unit, bool free = false) {
        Event& e = add(free ? EventKind::Free : EventKind::Alloc, 150);
        e.category = c;
        e.bytes = bytes;
        e.unit = unit;
    }
    void compute(bool begin, Phase p, int unit, std::uint64_t dt) {
        Event& e = add(begin ? EventKind::ComputeBegin : EventKind::ComputeEnd, dt);
        e.phase = p;
        e.unit = unit;
    }
    void collective(CollectiveOp op, int unit, std::uint64_t bytes, int peers,
                    std::uint64_t durationNs) {
        Event& b = add(EventKind::CollectiveBegin, 200);
        b.collective = op;
        b.unit = unit;
        b.bytes = bytes;
        b.peers = peers;
        Event& e = add(EventKind::CollectiveEnd, durationNs);
        e.collective = op;
        e.unit = unit;
        e.bytes = bytes;
        e.peers = peers;
    }

private:
    int rank_;
    std::uint64_t t_;
};

inline void writeStep(RankWriter& w, const Spec& s, std::int64_t step) {
    w.step = step;
    const std::uint64_t full = fullBytes(s), shard = shardBytes(s), act = 64 * 1024;
    const int n = s.ranks;
    w.add(EventKind::StepBegin, 1000);
    const bool replicas = s.ddp || s.zero1; // full parameters and gradients on every rank
    if (step == 0) {
        // Model states, allocated once: shards under ZeRO-3, whole replicas under DDP.
        for (int u = 0; u < s.units; ++u) {
            const std::uint64_t p = s.ddp ? full : shard;
            w.alloc(replicas ? Category::ParamFull : Category::ParamShard, replicas ? full : shard,
                    u);
            w.alloc(Category::MasterFp32, p * 2, u);
            w.alloc(Category::AdamM, p * 2, u);
            w.alloc(Category::AdamV, p * 2, u);
            w.alloc(replicas ? Category::GradFull : Category::GradShard, replicas ? full : shard,
                    u);
        }
    }
    for (int u = 0; u < s.units; ++u) {
        if (!replicas) {
            w.alloc(Category::ParamFull, full, u);
            w.collective(CollectiveOp::AllGather, u, full, n, 20000);
        }
        w.compute(true, Phase::Forward, u, 300);
        for (int a = 0; a < s.activationsPerUnit; ++a)
            w.alloc(Category::Activation, act, u);
        w.compute(false, Phase::Forward, u, 40000);
        if (!s.ddp) w.alloc(Category::ParamFull, full, u, true);
    }
    for (int u = s.units - 1; u >= 0; --u) {
        if (!replicas) {
            w.alloc(Category::ParamFull, full, u);
            w.collective(CollectiveOp::AllGather, u, full, n, 20000);
            w.alloc(Category::GradFull, full, u);
        }
        w.compute(true, Phase::Backward, u, 300);
        w.alloc(Category::Workspace, full * 2, u);
        for (int a = 0; a < s.activationsPerUnit; ++a)
            w.alloc(Category::Activation, act, u, true);
        w.alloc(Category::Workspace, full * 2, u, true);
        w.compute(false, Phase::Backward, u, 80000);
        if (s.ddp && !s.fusedAllReduce) {
            w.collective(CollectiveOp::AllReduce, u, full, n, 30000);
        } else if (!s.zero1 && !s.ddp) {
            w.alloc(Category::ParamFull, full, u, true);
            w.collective(CollectiveOp::ReduceScatter, u, full, n, 25000);
            w.alloc(Category::GradFull, full, u, true);
        }
    }
    const auto all = static_cast<std::uint64_t>(s.units) * full;
    if (s.ddp && s.fusedAllReduce) w.collective(CollectiveOp::AllReduce, kNoUnit, all, n, 30000);
    if (s.zero1) {
        w.alloc(Category::CommBuffer, all * 2, kNoUnit);
        w.collective(CollectiveOp::ReduceScatter, kNoUnit, all, n, 25000);
        w.alloc(Category::CommBuffer, all * 2, kNoUnit, true);
    }
    w.compute(true, Phase::Optimizer, kNoUnit, 500);
    w.collective(CollectiveOp::AllReduce, kNoUnit, 8, n, 3000); // the gradient norm
    w.compute(false, Phase::Optimizer, kNoUnit, 30000);
    if (s.zero1) {
        w.alloc(Category::CommBuffer, all, kNoUnit);
        w.collective(CollectiveOp::AllGather, kNoUnit, all, n, 25000);
        w.alloc(Category::CommBuffer, all, kNoUnit, true);
    }
    w.add(EventKind::StepEnd, 500);
}

inline std::string configJson(const Spec& s) {
    std::string units;
    for (int u = 0; u < s.units; ++u) {
        if (u) units += ",";
        units += "{\"name\":\"" + unitName(u, s.units) +
                 "\",\"params\":" + std::to_string(s.unitParams) +
                 ",\"padded\":" + std::to_string(paddedParams(s)) + "}";
    }
    return "{\"strategy\":\"" +
           std::string(s.ddp     ? "ddp"
                       : s.zero1 ? "zero1"
                                 : "zero3") +
           "\",\"world_size\":" + std::to_string(s.ranks) +
           ",\"model\":\"tiny\",\"precision\":\"bf16\",\"steps\":" + std::to_string(s.steps) +
           ",\"units\":[" + units + "]}";
}

inline std::string makeRecording(const Spec& s) {
    std::string out;
    protocol::writeHeader(out);
    for (int r = 0; r < s.ranks; ++r)
        protocol::writeRecord(out, protocol::Handshake{r, s.ranks, configJson(s)});
    std::vector<RankWriter> writers;
    for (int r = 0; r < s.ranks; ++r)
        writers.emplace_back(r, 1000000 + static_cast<std::uint64_t>(r) * s.skewNs);
    for (std::int64_t step = 0; step < s.steps; ++step) {
        std::uint64_t end = 0;
        for (int r = 0; r < s.ranks; ++r) {
            RankWriter& w = writers[static_cast<std::size_t>(r)];
            w.events.clear();
            writeStep(w, s, step);
            end = std::max(end, w.events.back().timeNs);
            protocol::writeRecord(out, protocol::EventBatch{r, w.events});
        }
        const std::uint64_t begin = writers[0].events.front().timeNs;
        protocol::writeRecord(
            out, protocol::StepSummary{step, 5.5 - 0.1 * static_cast<double>(step), end - begin});
    }
    protocol::writeRecord(out, protocol::End{});
    return out;
}

// Decodes and assembles a recording into a replay model, as the GUI does.
inline std::unique_ptr<replay::ReplayModel> loadModel(const std::string& bytes) {
    const protocol::Recording rec = protocol::decodeRecording(bytes);
    replay::StreamAssembler assembler;
    for (const auto& h : rec.handshakes)
        assembler.consume(h);
    // Batches then step summaries in stream order: the recording keeps them apart, so replay
    // them per step (each summary closes the batches before it).
    std::size_t batch = 0;
    for (const auto& summary : rec.steps) {
        for (; batch < rec.batches.size(); ++batch) {
            const auto& b = rec.batches[batch];
            if (!b.events.empty() && b.events.front().step > summary.step) break;
            assembler.consume(b);
        }
        assembler.consume(summary);
    }
    for (; batch < rec.batches.size(); ++batch)
        assembler.consume(rec.batches[batch]);
    assembler.consume(protocol::End{});
    auto out = assembler.take();
    auto model = std::make_unique<replay::ReplayModel>();
    model->reset(out.runInfo);
    model->append(out.steps);
    return model;
}

// Global index of the n-th event (0-based) of `rank` matching `pred`; eventCount() if none.
template <class Pred>
std::uint64_t findEvent(const replay::ReplayModel& m, int rank, Pred pred, int nth = 0) {
    for (std::uint64_t k = 0; k < m.eventCount(); ++k) {
        const Event& e = m.event(k);
        if (e.rank == rank && pred(e) && nth-- == 0) return k;
    }
    return m.eventCount();
}

} // namespace shardscope::testrec
