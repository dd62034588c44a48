#pragma once
// Steps as people count them. The stream and recordings number steps from 0 (Event::step,
// StepSummary::step, Failure::step); everything a person reads — the GUI's labels, axes and
// sentences, the CLI's lines, a job's ending (launch::JobEnding::step) — counts from 1, so
// "step 1" is the first step everywhere.
#include <cstdint>

namespace shardscope {

constexpr std::int64_t displayStep(std::int64_t streamStep) {
    return streamStep + 1;
}

} // namespace shardscope
