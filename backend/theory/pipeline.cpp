#include "theory/pipeline.h"

#include <algorithm>

namespace shardscope::theory {

double pipeBubble(plan::PipeSchedule schedule, const plan::PipeShape& shape,
                  const plan::PipeOpTimes& times) {
    const double p = shape.stages, m = shape.microBatches, v = shape.virtualStages;
    switch (schedule) {
    case plan::PipeSchedule::GPipe:
    case plan::PipeSchedule::OneFOneB:
        return (p - 1) / (m + p - 1);
    case plan::PipeSchedule::Interleaved:
        return (p - 1) / (v * m + p - 1);
    case plan::PipeSchedule::ZeroBubbleH1: {
        // Before M reaches P only M − 1 deferred Ws are there to fill the drain.
        const double lost =
            (p - 1) * (times.forward + times.backward) - std::min(m - 1, p - 1) * times.weightGrad;
        return lost / (m * (times.forward + times.backward + times.weightGrad) + lost);
    }
    }
    return 0;
}

int pipeActivationsInFlight(plan::PipeSchedule schedule, const plan::PipeShape& shape, int stage) {
    const int p = shape.stages, m = shape.microBatches, v = shape.virtualStages;
    switch (schedule) {
    case plan::PipeSchedule::GPipe:
        return m;
    case plan::PipeSchedule::OneFOneB:
        return std::min(p - stage, m);
    case plan::PipeSchedule::ZeroBubbleH1:
        return std::min(p, m);
    case plan::PipeSchedule::Interleaved:
        return m == p ? v * m : std::min(2 * (p - stage - 1) + (v - 1) * p + 1, v * m);
    }
    return 0;
}

} // namespace shardscope::theory
