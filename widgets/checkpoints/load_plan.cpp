#include "checkpoints/load_plan.h"

#include "plan/policy.h"
#include "plan/shape.h"

#include <set>
#include <utility>

namespace shardscope::widgets {
namespace {

plan::Policy policyOf(plan::Strategy s, int hybridGroup) {
    plan::Knobs k;
    if (hybridGroup > 0) k.hybridGroupSize = hybridGroup;
    return plan::policyFor(s, k);
}

} // namespace

int savedShardCount(const checkpoint::Metadata& meta) {
    const auto s = plan::parseStrategy(meta.strategy);
    if (!s) return 1;
    // A pipeline's stages each sharded their units over their own world_size / P ranks.
    return policyOf(*s, meta.hybridGroup)
        .shardCount(meta.worldSize / std::max(meta.pipeParallel, 1));
}

LoadPlan planLoad(const checkpoint::Metadata& meta, plan::Strategy strategy, int world,
                  int hybridGroup) {
    const plan::Policy policy = policyOf(strategy, hybridGroup);
    LoadPlan out;
    out.savedWorld = meta.worldSize;
    out.savedStrategy = meta.strategy;
    out.newWorld = world;
    out.newStrategy = strategy;
    out.hybridGroup = policy.hybrid ? hybridGroup : 0;
    const int shardsSaved = savedShardCount(meta);
    std::vector<checkpoint::Placement> places;
    for (int r = 0; r < world; ++r)
        places.push_back(checkpoint::placementOf(policy, world, r)); // throws for a bad world
    const int shardsNew = policy.shardCount(world);

    out.units.resize(meta.units.size());
    for (std::size_t u = 0; u < meta.units.size(); ++u) {
        UnitLoadPlan& up = out.units[u];
        up.unit = static_cast<std::int32_t>(u);
        up.name = meta.units[u].name;
        up.elements = meta.units[u].elements;
        up.paddedSaved = meta.units[u].padded;
        up.shardsSaved = shardsSaved;
        up.shardsNew = shardsNew;
        up.paddedNew = plan::paddedElements(up.elements, static_cast<std::uint64_t>(shardsNew));
    }
    for (std::size_t f = 0; f < meta.files.size(); ++f)
        for (const checkpoint::Range& r : meta.files[f].ranges)
            out.units[static_cast<std::size_t>(r.unit)].saved.push_back(
                {f, meta.files[f].rank, r.begin, r.end});

    out.ranks.resize(static_cast<std::size_t>(world));
    for (int r = 0; r < world; ++r) {
        // The loader's needs for this rank: its owned span of every unit (train/checkpointing.cpp).
        std::vector<checkpoint::Span> needs;
        for (std::size_t u = 0; u < meta.units.size(); ++u) {
            const checkpoint::Span s =
                checkpoint::ownedSpan(places[static_cast<std::size_t>(r)], policy.shardOptimizer,
                                      static_cast<std::int32_t>(u), meta.units[u].elements);
            out.units[u].owned.push_back(s);
            needs.push_back(s);
        }
        RankLoad& load = out.ranks[static_cast<std::size_t>(r)];
        std::set<std::size_t> files;
        for (const checkpoint::Read& rd : checkpoint::planReads(meta, needs)) {
            out.units[static_cast<std::size_t>(rd.unit)].reads.push_back({r, rd});
            load.bytesNeeded += rd.bytes();
            ++load.reads;
            files.insert(rd.file);
        }
        for (const checkpoint::FileBytes& b : checkpoint::bytesToRead(meta, needs))
            load.bytesRead += b.end - b.begin;
        load.files = files.size();
    }
    return out;
}

} // namespace shardscope::widgets
