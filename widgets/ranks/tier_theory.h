#pragma once
// The theory's per-rank bytes by tier (device / host / NVMe) for a run's configuration, as the
// worker computes them for its report: model states from theory::modelStates and each tier's
// peak from the dry run (predict::predictPeak). The rank view draws them beside the measured
// bars; with offload, the capacity budget applies to the device tier alone.
#include "core/categories.h"
#include "replay/run_data.h"

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

namespace shardscope::widgets {

struct TierTheory {
    ByteTable modelStates; // per rank, by category and tier
    std::array<std::uint64_t, kTierCount>
        peak{}; // device: the predicted peak; host/nvme: the dry run's
    bool offloaded() const {
        return modelStates.tier(Tier::Host) + modelStates.tier(Tier::Nvme) > 0;
    }
};

// One per pipeline stage (one without a pipeline: every rank's), a stage's ranks holding only
// its units (runconfig::scenarioOf(config, stage)). Empty when the handshake's configuration
// does not describe a run the theory can size (an older recording, a model without a shape).
std::vector<TierTheory> tierTheoriesOf(const replay::RunInfo& info);

} // namespace shardscope::widgets
