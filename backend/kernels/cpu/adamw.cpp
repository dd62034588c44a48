#include "kernels/cpu/adamw.h"

#include <cmath>

namespace shardscope::kernels {

namespace {

template <class G, class ToFloat>
void update(const AdamWScalars& s, float* p, const G* g, float* m, float* v, std::uint64_t n,
            ToFloat toF) {
    for (std::uint64_t i = 0; i < n; ++i) {
        const float grad = toF(g[i]) * s.gradScale;
        m[i] = s.beta1 * m[i] + (1.0f - s.beta1) * grad;
        v[i] = s.beta2 * v[i] + (1.0f - s.beta2) * grad * grad;
        const float denom = std::sqrt(v[i]) / s.vCorrection + s.eps;
        p[i] = p[i] * s.decay - s.stepSize * m[i] / denom;
    }
}

} // namespace

void adamwUpdate(const AdamWScalars& s, float* params, const float* grads, float* m, float* v,
                 std::uint64_t n) {
    update(s, params, grads, m, v, n, [](float x) { return x; });
}

void adamwUpdate(const AdamWScalars& s, float* params, const Bf16* grads, float* m, float* v,
                 std::uint64_t n) {
    update(s, params, grads, m, v, n, [](Bf16 x) { return toFloat(x); });
}

} // namespace shardscope::kernels
