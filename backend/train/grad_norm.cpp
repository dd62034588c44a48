#include "train/grad_norm.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

namespace shardscope::train {

__extension__ typedef unsigned __int128 Uint128;

double globalSquaredNorm(std::span<const GradRange> local, device::Ops& ops,
                         comm::Communicator& world, std::uint64_t totalElements) {
    double maxAbs = 0.0;
    bool finite = true;
    for (const GradRange& r : local) {
        const device::GradientStats st = ops.gradientStats(r.data, r.count, r.bf16);
        finite = finite && st.finite;
        maxAbs = std::max(maxAbs, st.maxAbs);
    }
    // Non-finite gradients: the norm is not finite either (clipping then leaves them alone).
    if (world.maxScalar(finite ? 0.0 : 1.0) > 0.0) return std::numeric_limits<double>::infinity();
    const double globalMax = world.maxScalar(maxAbs);
    if (globalMax == 0.0) return 0.0;
    int e = 0;
    std::frexp(globalMax, &e); // globalMax < 2^e, so every g² < 2^(2e)
    const int bits = static_cast<int>(std::bit_width(totalElements | 1));
    const int k = 126 - bits; // Σ of totalElements values < 2^k stays below 2^126
    const int shift = k - 2 * e;
    Uint128 sum = 0;
    for (const GradRange& r : local) {
        const device::Uint128Parts part = ops.sumSquaresFixed(r.data, r.count, r.bf16, shift);
        sum += (static_cast<Uint128>(part.hi) << 64) | part.lo;
    }
    // Four 32-bit limbs: each cross-rank sum stays an exact integer in a double.
    Uint128 total = 0;
    for (int limb = 3; limb >= 0; --limb) {
        const auto part = static_cast<std::uint64_t>((sum >> (32 * limb)) & 0xffffffffu);
        const double reduced = world.sumScalar(static_cast<double>(part));
        total = (total << 32) + static_cast<Uint128>(reduced);
    }
    return std::ldexp(static_cast<double>(total), -shift);
}

} // namespace shardscope::train
