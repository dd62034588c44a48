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

kernels::AdamWScalars scalarsOf(const AdamWConfig& cfg, const AdamWStep& step) {
    return kernels::adamwScalars(cfg.learningRate, cfg.beta1, cfg.beta2, cfg.eps, cfg.weightDecay, step.step,
                                 step.decay, step.gradScale);
}

float clipScale(double globalNorm, double clipNorm) {
    if (clipNorm <= 0.0 || !std::isfinite(globalNorm)) return 1.0f;
    const double scale = clipNorm / (globalNorm + 1e-6);
    return scale < 1.0 ? static_cast<float>(scale) : 1.0f;
}

// One implementation of the update (kernels/cpu/adamw.h), shared with the device ops.
void adamwUpdate(const AdamWConfig& cfg, const AdamWStep& step, std::span<float> params,
                 std::span<const kernels::Bf16> grads, std::span<float> m, std::span<float> v) {
    if (grads.size() != params.size() || m.size() != params.size() || v.size() != params.size())
        throw Error(ErrorKind::Internal, "adamwUpdate: state sizes differ");
    kernels::adamwUpdate(scalarsOf(cfg, step), params.data(), grads.data(), m.data(), v.data(), params.size());
}

void adamwUpdate(const AdamWConfig& cfg, const AdamWStep& step, std::span<float> params,
                 std::span<const float> grads, std::span<float> m, std::span<float> v) {
    if (grads.size() != params.size() || m.size() != params.size() || v.size() != params.size())
        throw Error(ErrorKind::Internal, "adamwUpdate: state sizes differ");
    kernels::adamwUpdate(scalarsOf(cfg, step), params.data(), grads.data(), m.data(), v.data(), params.size());
}

} // namespace shardscope::train
