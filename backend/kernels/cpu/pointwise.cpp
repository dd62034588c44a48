// Embedding, GELU, residual add and cross-entropy: the ops without a GEMM.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "core/error.h"
#include "kernels/cpu/ops.h"

namespace shardscope::kernels {

void embeddingForward(const std::int32_t* ids, const float* wte, const float* wpe, float* out,
                      std::int64_t batch, std::int64_t seq, std::int64_t d, std::int64_t vocab) {
    for (std::int64_t b = 0; b < batch; ++b) {
        for (std::int64_t s = 0; s < seq; ++s) {
            const std::int32_t id = ids[b * seq + s];
            if (id < 0 || id >= vocab)
                throwInvalid("token id " + std::to_string(id) + " is outside the vocabulary (" +
                             std::to_string(vocab) + ")");
            const float* t = wte + static_cast<std::int64_t>(id) * d;
            const float* p = wpe + s * d;
            float* o = out + (b * seq + s) * d;
            for (std::int64_t i = 0; i < d; ++i) o[i] = t[i] + p[i];
        }
    }
}

void embeddingBackward(const std::int32_t* ids, const float* dout, float* dwte, float* dwpe,
                       std::int64_t batch, std::int64_t seq, std::int64_t d) {
    for (std::int64_t b = 0; b < batch; ++b) {
        for (std::int64_t s = 0; s < seq; ++s) {
            const float* g = dout + (b * seq + s) * d;
            float* t = dwte + static_cast<std::int64_t>(ids[b * seq + s]) * d;
            float* p = dwpe + s * d;
            for (std::int64_t i = 0; i < d; ++i) {
                t[i] += g[i];
                p[i] += g[i];
            }
        }
    }
}

namespace {
constexpr float kGeluC = 0.7978845608028654f; // √(2/π)
constexpr float kGeluA = 0.044715f;

// tanh(u) = 1 − 2/(e^{2u} + 1): exact limits at ±∞ (e^{2u} → ∞ or 0) and an absolute error of a
// few 1e-8 near 0. glibc's tanhf goes through expm1f and was the largest non-GEMM cost of a step.
inline float tanhViaExp(float u) { return 1.0f - 2.0f / (std::exp(2.0f * u) + 1.0f); }
} // namespace

void geluForward(const float* x, float* y, std::int64_t n) {
    for (std::int64_t i = 0; i < n; ++i) {
        const float v = x[i];
        y[i] = 0.5f * v * (1.0f + tanhViaExp(kGeluC * (v + kGeluA * v * v * v)));
    }
}

void geluBackward(const float* dy, const float* x, float* dx, std::int64_t n) {
    for (std::int64_t i = 0; i < n; ++i) {
        const float v = x[i];
        const float t = tanhViaExp(kGeluC * (v + kGeluA * v * v * v));
        const float dInner = kGeluC * (1.0f + 3.0f * kGeluA * v * v);
        dx[i] = dy[i] * (0.5f * (1.0f + t) + 0.5f * v * (1.0f - t * t) * dInner);
    }
}

void add(const float* a, const float* b, float* y, std::int64_t n) {
    for (std::int64_t i = 0; i < n; ++i) y[i] = a[i] + b[i];
}

double crossEntropyForward(float* logitsToProbs, const std::int32_t* targets, std::int64_t rows,
                           std::int64_t vocab) {
    double total = 0.0;
    for (std::int64_t r = 0; r < rows; ++r) {
        float* row = logitsToProbs + r * vocab;
        const std::int32_t t = targets[r];
        if (t < 0 || t >= vocab)
            throwInvalid("target id " + std::to_string(t) + " is outside the vocabulary (" +
                         std::to_string(vocab) + ")");
        const float maxv = *std::max_element(row, row + vocab);
        double sum = 0.0;
        for (std::int64_t j = 0; j < vocab; ++j) sum += static_cast<double>(std::exp(row[j] - maxv));
        // −log p_t = log Σ exp(z − max) − (z_t − max): stable even when p_t underflows.
        total += std::log(sum) - static_cast<double>(row[t] - maxv);
        const float inv = static_cast<float>(1.0 / sum);
        for (std::int64_t j = 0; j < vocab; ++j) row[j] = std::exp(row[j] - maxv) * inv;
    }
    return total / static_cast<double>(rows);
}

void crossEntropyBackward(const float* probs, const std::int32_t* targets, float* dlogits,
                          std::int64_t rows, std::int64_t vocab, float scale) {
    for (std::int64_t r = 0; r < rows; ++r) {
        const float* p = probs + r * vocab;
        float* g = dlogits + r * vocab;
        for (std::int64_t j = 0; j < vocab; ++j) g[j] = p[j] * scale;
        g[targets[r]] -= scale;
    }
}

} // namespace shardscope::kernels
