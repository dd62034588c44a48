#include "train/grad_norm.h"

#include <bit>
#include <cmath>
#include <limits>

#include "kernels/cpu/bf16.h"

namespace shardscope::train {

namespace {

__extension__ typedef unsigned __int128 Uint128;

template <class F> void forEach(const GradRange& r, F&& f) {
    if (r.bf16) {
        const auto* g = static_cast<const kernels::Bf16*>(r.data);
        for (std::uint64_t i = 0; i < r.count; ++i) f(kernels::toFloat(g[i]));
    } else {
        const auto* g = static_cast<const float*>(r.data);
        for (std::uint64_t i = 0; i < r.count; ++i) f(g[i]);
    }
}

} // namespace

double globalSquaredNorm(std::span<const GradRange> local, comm::Communicator& world,
                         std::uint64_t totalElements) {
    double maxAbs = 0.0;
    bool finite = true;
    for (const GradRange& r : local)
        forEach(r, [&](float g) {
            const double a = std::fabs(static_cast<double>(g));
            if (!std::isfinite(a)) finite = false;
            else if (a > maxAbs) maxAbs = a;
        });
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
    for (const GradRange& r : local)
        forEach(r, [&](float g) {
            const double sq = static_cast<double>(g) * static_cast<double>(g);
            sum += static_cast<Uint128>(std::ldexp(sq, shift)); // truncates toward zero
        });
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
