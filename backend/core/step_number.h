#pragma once
// Steps as people count them. The stream and recordings number steps from 0 (Event::step,
// StepSummary::step, Failure::step); everything a person reads — the GUI's labels, axes and
// sentences, the CLI's lines, a job's ending (launch::JobEnding::step) — counts from 1, so
// "step 1" is the first step everywhere.
//
// A resumed run (--resume) counts on from its checkpoint: its stream still numbers its own steps
// from 0, and `stepsBefore` (the checkpoint's step, in the handshake as "steps_before") puts them
// after the saved ones, so the run that saved at step 3 and resumes for 2 shows steps 4 and 5.
#include <cstdint>

namespace shardscope {

constexpr std::int64_t displayStep(std::int64_t streamStep, std::int64_t stepsBefore = 0) {
    return stepsBefore + streamStep + 1;
}

} // namespace shardscope
