#include "checkpoint/reshard.h"

#include "core/error.h"

#include <algorithm>
#include <string>

namespace shardscope::checkpoint {

Placement placementOf(const plan::Policy& policy, int world, int rank) {
    if (world < 1 || rank < 0 || rank >= world)
        throwInvalid("rank " + std::to_string(rank) + " is outside a world of " +
                     std::to_string(world));
    Placement p;
    p.world = world;
    p.rank = rank;
    if (!policy.shardOptimizer) { // DDP: everyone holds everything
        p.copies = world;
        p.copyIndex = rank;
        return p;
    }
    if (policy.hybrid) {
        const int g = policy.hybridGroup;
        if (g < 1 || world % g != 0)
            throwInvalid("a hybrid group of " + std::to_string(g) + " does not divide " +
                         std::to_string(world) + " ranks");
        p.shards = g;
        p.shardRank = rank % g;
        p.copies = world / g;
        p.copyIndex = rank / g;
        return p;
    }
    p.shards = world;
    p.shardRank = rank;
    return p;
}

Span ownedSpan(const Placement& p, bool shardOptimizer, std::int32_t unit, std::uint64_t elements) {
    if (!shardOptimizer) return {unit, 0, elements};
    const auto shards = static_cast<std::uint64_t>(p.shards);
    const std::uint64_t shard = plan::paddedElements(elements, shards) / shards;
    const std::uint64_t lo = static_cast<std::uint64_t>(p.shardRank) * shard;
    return {unit, lo, std::max(lo, std::min(lo + shard, elements))};
}

Span replicaPart(const Span& owned, int copies, int index) {
    const auto c = static_cast<std::uint64_t>(copies);
    const auto i = static_cast<std::uint64_t>(index);
    const std::uint64_t n = owned.elements();
    const std::uint64_t chunk = (n + c - 1) / c;
    const std::uint64_t b = owned.begin + std::min(n, i * chunk);
    const std::uint64_t e = owned.begin + std::min(n, (i + 1) * chunk);
    return {owned.unit, b, e};
}

std::vector<std::uint64_t> rangeOffsets(const DataFile& f) {
    std::vector<std::uint64_t> out;
    std::uint64_t at = 0;
    for (const Range& r : f.ranges) {
        out.push_back(at);
        at += r.bytes();
    }
    return out;
}

std::vector<Read> planReads(const Metadata& m, std::span<const Span> needs) {
    for (const Span& s : needs)
        if (s.unit < 0 || static_cast<std::size_t>(s.unit) >= m.units.size() || s.begin > s.end ||
            s.end > m.units[static_cast<std::size_t>(s.unit)].elements)
            throwInvalid("a shard of unit " + std::to_string(s.unit) + " [" +
                         std::to_string(s.begin) + ", " + std::to_string(s.end) +
                         ") is not inside the checkpoint's model");
    std::vector<Read> out;
    for (std::size_t fi = 0; fi < m.files.size(); ++fi) {
        const DataFile& f = m.files[fi];
        const std::vector<std::uint64_t> offsets = rangeOffsets(f);
        for (std::size_t ri = 0; ri < f.ranges.size(); ++ri) {
            const Range& r = f.ranges[ri];
            for (const Span& s : needs) {
                if (s.unit != r.unit) continue;
                const std::uint64_t b = std::max(s.begin, r.begin);
                const std::uint64_t e = std::min(s.end, r.end);
                if (b >= e) continue;
                Read read{fi, ri, r.unit, b, e, {}};
                for (int st = 0; st < kStates; ++st)
                    read.offsets[static_cast<std::size_t>(st)] =
                        offsets[ri] +
                        static_cast<std::uint64_t>(st) * r.elements() * sizeof(float) +
                        (b - r.begin) * sizeof(float);
                out.push_back(read);
            }
        }
    }
    return out;
}

std::vector<FileBytes> bytesToRead(const Metadata& m, std::span<const Span> needs) {
    std::vector<FileBytes> pieces;
    for (const Read& rd : planReads(m, needs)) {
        const Range& r = m.files[rd.file].ranges[rd.range];
        const std::uint64_t e = r.elements();
        if (m.version == 1) {
            const std::uint64_t at = rangeOffsets(m.files[rd.file])[rd.range];
            pieces.push_back({rd.file, at, at + r.bytes()});
            continue;
        }
        const std::uint64_t k = m.chunkElements, lo = rd.begin - r.begin, hi = rd.end - r.begin;
        for (int s = 0; s < kStates; ++s) {
            const std::uint64_t block =
                rd.offsets[static_cast<std::size_t>(s)] - lo * sizeof(float);
            pieces.push_back({rd.file, block + (lo / k) * k * sizeof(float),
                              block + std::min(e, (hi + k - 1) / k * k) * sizeof(float)});
        }
    }
    std::sort(pieces.begin(), pieces.end(), [](const FileBytes& a, const FileBytes& b) {
        return a.file != b.file ? a.file < b.file : a.begin < b.begin;
    });
    std::vector<FileBytes> out;
    for (const FileBytes& p : pieces) {
        if (!out.empty() && out.back().file == p.file && p.begin <= out.back().end)
            out.back().end = std::max(out.back().end, p.end);
        else
            out.push_back(p);
    }
    return out;
}

} // namespace shardscope::checkpoint
