#include "train/optimizer.h"

#include <cmath>

#include "core/error.h"

namespace shardscope::train {

double sumSquares(std::span<const kernels::Bf16> grads) {
    double sum = 0.0;
    for (kernels::Bf16 g : grads) {
        const auto x = static_cast<double>(kernels::toFloat(g));
        sum += x * x;
    }
    return sum;
}

double sumSquares(std::span<const float> grads) {
    double sum = 0.0;
    for (float g : grads) sum += static_cast<double>(g) * static_cast<double>(g);
    return sum;
}

float clipScale(double globalNorm, double clipNorm) {
    if (clipNorm <= 0.0 || !std::isfinite(globalNorm)) return 1.0f;
    const double scale = clipNorm / (globalNorm + 1e-6);
    return scale < 1.0 ? static_cast<float>(scale) : 1.0f;
}

namespace {

template <class Grad, class ToFloat>
void update(const AdamWConfig& cfg, const AdamWStep& step, std::span<float> p,
            std::span<const Grad> g, std::span<float> m, std::span<float> v, ToFloat toF) {
    if (g.size() != p.size() || m.size() != p.size() || v.size() != p.size())
        throw Error(ErrorKind::Internal, "adamwUpdate: state sizes differ");
    const auto t = static_cast<double>(step.step);
    const auto b1 = static_cast<float>(cfg.beta1);
    const auto b2 = static_cast<float>(cfg.beta2);
    const auto eps = static_cast<float>(cfg.eps);
    const auto decay = step.decay ? static_cast<float>(1.0 - cfg.learningRate * cfg.weightDecay) : 1.0f;
    // Bias corrections folded into the step size, as PyTorch does (computed once, in double).
    const auto stepSize = static_cast<float>(cfg.learningRate / (1.0 - std::pow(cfg.beta1, t)));
    const auto vCorrection = static_cast<float>(std::sqrt(1.0 - std::pow(cfg.beta2, t)));
    for (std::size_t i = 0; i < p.size(); ++i) {
        const float grad = toF(g[i]) * step.gradScale;
        m[i] = b1 * m[i] + (1.0f - b1) * grad;
        v[i] = b2 * v[i] + (1.0f - b2) * grad * grad;
        const float denom = std::sqrt(v[i]) / vCorrection + eps;
        p[i] = p[i] * decay - stepSize * m[i] / denom;
    }
}

} // namespace

void adamwUpdate(const AdamWConfig& cfg, const AdamWStep& step, std::span<float> params,
                 std::span<const kernels::Bf16> grads, std::span<float> m, std::span<float> v) {
    update(cfg, step, params, grads, m, v, [](kernels::Bf16 x) { return kernels::toFloat(x); });
}

void adamwUpdate(const AdamWConfig& cfg, const AdamWStep& step, std::span<float> params,
                 std::span<const float> grads, std::span<float> m, std::span<float> v) {
    update(cfg, step, params, grads, m, v, [](float x) { return x; });
}

} // namespace shardscope::train
