#include "train/optimizer.h"

#include <algorithm>
#include <cmath>

namespace shardscope::train {

double clipCoefficient(double globalNorm, double clipNorm) {
    if (clipNorm <= 0.0 || !std::isfinite(globalNorm)) return 1.0;
    return std::min(1.0, clipNorm / (globalNorm + 1e-6));
}

} // namespace shardscope::train
