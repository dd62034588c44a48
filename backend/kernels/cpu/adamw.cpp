#include "kernels/cpu/adamw.h"

#include <cmath>

namespace shardscope::kernels {

AdamWScalars adamwScalars(double learningRate, double beta1, double beta2, double eps,
                          double weightDecay, std::int64_t step, bool decay, float gradScale) {
    const auto t = static_cast<double>(step);
    AdamWScalars s;
    s.beta1 = static_cast<float>(beta1);
    s.beta2 = static_cast<float>(beta2);
    s.eps = static_cast<float>(eps);
    s.decay = decay ? static_cast<float>(1.0 - learningRate * weightDecay) : 1.0f;
    // Bias corrections folded into the step size, as PyTorch does (computed once, in double).
    s.stepSize = static_cast<float>(learningRate / (1.0 - std::pow(beta1, t)));
    s.vCorrection = static_cast<float>(std::sqrt(1.0 - std::pow(beta2, t)));
    s.gradScale = gradScale;
    return s;
}

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
