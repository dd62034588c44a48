// The final weights of every unit, gathered at world rank 0 (Sharding::gatherWeights): the
// data-parallel slices, the tensor-parallel slices put back whole, the pipeline's stages merged.
// Instrumentation traffic: no events, no CommStats. Part of the mechanism in sharded.h.
#include "core/error.h"
#include "device/ops.h"
#include "strategy/sharded.h"

#include <cstring>
#include <string>

namespace shardscope::strategy::detail {

std::vector<std::vector<float>> Sharded::gatherWeights() {
    std::vector<std::vector<float>> stage = stageWeights();
    if (!groups_.pipe || groups_.pipe->size() == 1) return stage;
    // Every stage's leader (DP rank 0 of TP rank 0) holds its units whole: the pipeline group of
    // world rank 0 gathers them there. Every pipeline group gathers (a collective), the others
    // discard what they got.
    std::string mine;
    for (const auto& unit : stage) {
        const std::uint64_t n = unit.size();
        mine.append(reinterpret_cast<const char*>(&n), sizeof(n));
        if (n > 0) mine.append(reinterpret_cast<const char*>(unit.data()), n * sizeof(float));
    }
    const std::vector<std::string> parts = groups_.pipe->gatherBytes(mine, 0);
    if (groups_.world->rank() != 0) return {};
    std::vector<std::vector<float>> out(units_.size());
    for (const std::string& part : parts) {
        std::size_t at = 0;
        for (std::size_t u = 0; at < part.size() && u < out.size(); ++u) {
            std::uint64_t n = 0;
            if (at + sizeof(n) > part.size())
                throw Error(ErrorKind::Internal, "gatherWeights: short stage part");
            std::memcpy(&n, part.data() + at, sizeof(n));
            at += sizeof(n);
            if (n > (part.size() - at) / sizeof(float))
                throw Error(ErrorKind::Internal, "gatherWeights: malformed stage part");
            if (n == 0) continue;
            out[u].resize(n);
            std::memcpy(out[u].data(), part.data() + at, n * sizeof(float));
            at += n * sizeof(float);
        }
    }
    for (std::size_t u = 0; u < out.size(); ++u)
        if (out[u].empty())
            throw Error(ErrorKind::Internal, "gatherWeights: no stage sent " + layouts_[u].name());
    return out;
}

// The weights of this rank's stage, whole (every TP slice put back), at the stage's leader: DP
// rank 0 of TP rank 0 (other ranks get an empty vector; units of other stages are empty).
std::vector<std::vector<float>> Sharded::stageWeights() {
    std::vector<std::vector<float>> slices = gatherSlices();
    const std::int64_t tp = config_.shape.tp;
    if (tp <= 1) return slices;
    // DP rank 0 of every TP rank (world ranks 0 … T−1, TP group 0) holds its whole slice: the
    // TP group gathers them at world rank 0, which puts each slice back into the whole tensors.
    std::string mine;
    for (const auto& unit : slices)
        if (!unit.empty())
            mine.append(reinterpret_cast<const char*>(unit.data()), unit.size() * sizeof(float));
    const std::vector<std::string> parts = groups_.tensor->gatherBytes(mine, 0);
    if (groups_.tensor->rank() != 0 || groups_.data->rank() != 0) return {};
    if (parts.size() != static_cast<std::size_t>(tp))
        throw Error(ErrorKind::Internal,
                    "gatherWeights: the TP group of a stage's leader is not T ranks");
    const std::vector<plan::UnitLayout> whole = plan::unitLayouts(plan::untiled(config_.shape));
    std::vector<std::vector<float>> out(whole.size());
    std::vector<float> slice;
    for (std::size_t u = 0; u < whole.size(); ++u)
        if (holds(static_cast<std::int32_t>(u))) out[u].assign(whole[u].elements(), 0.0f);
    for (std::int64_t r = 0; r < tp; ++r) {
        const std::string& part = parts[static_cast<std::size_t>(r)];
        std::size_t at = 0;
        for (std::size_t u = 0; u < whole.size(); ++u) {
            if (!holds(static_cast<std::int32_t>(u))) continue;
            const std::uint64_t n = layouts_[u].elements();
            if (at + n * sizeof(float) > part.size())
                throw Error(ErrorKind::Internal, "gatherWeights: short TP part");
            slice.resize(n);
            std::memcpy(slice.data(), part.data() + at, n * sizeof(float));
            at += n * sizeof(float);
            plan::copyTpSlice(whole[u], layouts_[u], tp, r, out[u].data(), slice.data(), false);
        }
    }
    return out;
}

// Every unit's slice weights at DP rank 0 (of each TP rank), gathered over the DP group.
std::vector<std::vector<float>> Sharded::gatherSlices() {
    // Each rank sends (begin, end, fp32 weights) per unit for the part it owns; DDP's rank 0 and
    // HYBRID_SHARD's first replica cover everything.
    std::string mine;
    const bool sends = policy_.shardOptimizer ? (!policy_.hybrid || groups_.replica->rank() == 0)
                                              : groups_.data->rank() == 0;
    for (std::int32_t u = 0; u < unitCount(); ++u) {
        std::uint64_t range[2] = {0, 0};
        if (!holds(u)) { // another stage's: nothing from this rank
            mine.append(reinterpret_cast<const char*>(range), sizeof(range));
            continue;
        }
        OwnedSlice o = owned(u);
        if (sends) {
            range[0] = o.begin;
            range[1] = o.end;
        }
        mine.append(reinterpret_cast<const char*>(range), sizeof(range));
        const std::size_t at = mine.size();
        mine.resize(at + (range[1] - range[0]) * sizeof(float));
        const std::uint64_t bytes = (range[1] - range[0]) * sizeof(float);
        if (optimizerTier_ == Tier::Nvme) {
            if (bytes > 0) std::memcpy(mine.data() + at, readNvmeMaster(state(u)).data(), bytes);
        } else if (o.stateOnHost)
            std::memcpy(mine.data() + at, o.weights, bytes);
        else
            ops_.download(mine.data() + at, o.weights, bytes);
    }
    const std::vector<std::string> parts = groups_.data->gatherBytes(mine, 0);
    std::vector<std::vector<float>> out;
    if (groups_.data->rank() != 0) return out;
    out.resize(units_.size());
    for (std::size_t u = 0; u < units_.size(); ++u)
        if (holds(static_cast<std::int32_t>(u))) out[u].assign(units_[u].n, 0.0f);
    for (const std::string& part : parts) {
        std::size_t at = 0;
        for (std::size_t u = 0; u < units_.size(); ++u) {
            std::uint64_t range[2];
            std::memcpy(range, part.data() + at, sizeof(range));
            at += sizeof(range);
            const std::uint64_t len = range[1] - range[0];
            if (range[1] > out[u].size() || range[0] > range[1] ||
                at + len * sizeof(float) > part.size())
                throw Error(ErrorKind::Internal, "gatherWeights: malformed part");
            if (len > 0) // another stage's unit is an empty vector (no data to copy into)
                std::memcpy(out[u].data() + range[0], part.data() + at, len * sizeof(float));
            at += len * sizeof(float);
        }
    }
    return out;
}

} // namespace shardscope::strategy::detail
