// Embedding, GELU, residual add and cross-entropy: the ops without a GEMM.
#include "core/error.h"
#include "kernels/cpu/ops.h"
#include "kernels/cpu/simd.h"
#include "kernels/cpu/simd_math.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#if SHARDSCOPE_X86_SIMD
#include <immintrin.h>
#endif

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
            for (std::int64_t i = 0; i < d; ++i)
                o[i] = t[i] + p[i];
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
inline float tanhViaExp(float u) {
    return 1.0f - 2.0f / (std::exp(2.0f * u) + 1.0f);
}
} // namespace

namespace {

#if SHARDSCOPE_X86_SIMD

// tanh(kGeluC · (v + kGeluA·v³)) for eight values, as tanhViaExp.
SHARDSCOPE_TARGET_AVX2_FMA inline __m256 geluTanh8(__m256 v) {
    const __m256 v3 = _mm256_mul_ps(_mm256_mul_ps(v, v), v);
    const __m256 u =
        _mm256_mul_ps(_mm256_set1_ps(kGeluC), _mm256_fmadd_ps(_mm256_set1_ps(kGeluA), v3, v));
    const __m256 e = exp8(_mm256_add_ps(u, u));
    const __m256 one = _mm256_set1_ps(1.0f);
    return _mm256_sub_ps(one, _mm256_div_ps(_mm256_set1_ps(2.0f), _mm256_add_ps(e, one)));
}

SHARDSCOPE_TARGET_AVX2_FMA std::int64_t geluForwardAvx2(const float* x, float* y, std::int64_t n) {
    const std::int64_t end = n - n % 8;
    const __m256 half = _mm256_set1_ps(0.5f), one = _mm256_set1_ps(1.0f);
    for (std::int64_t i = 0; i < end; i += 8) {
        const __m256 v = _mm256_loadu_ps(x + i);
        _mm256_storeu_ps(y + i,
                         _mm256_mul_ps(_mm256_mul_ps(half, v), _mm256_add_ps(one, geluTanh8(v))));
    }
    return end;
}

SHARDSCOPE_TARGET_AVX2_FMA std::int64_t geluBackwardAvx2(const float* dy, const float* x, float* dx,
                                                         std::int64_t n) {
    const std::int64_t end = n - n % 8;
    const __m256 half = _mm256_set1_ps(0.5f), one = _mm256_set1_ps(1.0f),
                 c = _mm256_set1_ps(kGeluC), a3 = _mm256_set1_ps(3.0f * kGeluA);
    for (std::int64_t i = 0; i < end; i += 8) {
        const __m256 v = _mm256_loadu_ps(x + i);
        const __m256 t = geluTanh8(v);
        const __m256 dInner = _mm256_mul_ps(c, _mm256_fmadd_ps(a3, _mm256_mul_ps(v, v), one));
        const __m256 left = _mm256_mul_ps(half, _mm256_add_ps(one, t));
        const __m256 right = _mm256_mul_ps(
            _mm256_mul_ps(_mm256_mul_ps(half, v), _mm256_fnmadd_ps(t, t, one)), dInner);
        _mm256_storeu_ps(dx + i,
                         _mm256_mul_ps(_mm256_loadu_ps(dy + i), _mm256_add_ps(left, right)));
    }
    return end;
}

#endif

} // namespace

// Eight at a time where the CPU has AVX2 and FMA (a polynomial e^x, within a few ulp of the
// scalar loop's; CPU and CUDA GELU agree to fp32 tolerance, not bitwise, either way).
void geluForward(const float* x, float* y, std::int64_t n) {
    std::int64_t i = 0;
#if SHARDSCOPE_X86_SIMD
    if (haveAvx2Fma()) i = geluForwardAvx2(x, y, n);
#endif
    for (; i < n; ++i) {
        const float v = x[i];
        y[i] = 0.5f * v * (1.0f + tanhViaExp(kGeluC * (v + kGeluA * v * v * v)));
    }
}

void geluBackward(const float* dy, const float* x, float* dx, std::int64_t n) {
    std::int64_t i = 0;
#if SHARDSCOPE_X86_SIMD
    if (haveAvx2Fma()) i = geluBackwardAvx2(dy, x, dx, n);
#endif
    for (; i < n; ++i) {
        const float v = x[i];
        const float t = tanhViaExp(kGeluC * (v + kGeluA * v * v * v));
        const float dInner = kGeluC * (1.0f + 3.0f * kGeluA * v * v);
        dx[i] = dy[i] * (0.5f * (1.0f + t) + 0.5f * v * (1.0f - t * t) * dInner);
    }
}

void add(const float* a, const float* b, float* y, std::int64_t n) {
    for (std::int64_t i = 0; i < n; ++i)
        y[i] = a[i] + b[i];
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
        // −log p_t = log Σ exp(z − max) − (z_t − max): stable even when p_t underflows.
        const double logitTerm = static_cast<double>(row[t] - maxv);
        // One exp per logit: the row holds exp(z − max) until it is scaled by 1/Σ.
        double sum = 0.0;
        for (std::int64_t j = 0; j < vocab; ++j) {
            row[j] = std::exp(row[j] - maxv);
            sum += static_cast<double>(row[j]);
        }
        total += std::log(sum) - logitTerm;
        const float inv = static_cast<float>(1.0 / sum);
        for (std::int64_t j = 0; j < vocab; ++j)
            row[j] *= inv;
    }
    return total / static_cast<double>(rows);
}

void crossEntropyBackward(const float* probs, const std::int32_t* targets, float* dlogits,
                          std::int64_t rows, std::int64_t vocab, float scale) {
    for (std::int64_t r = 0; r < rows; ++r) {
        const float* p = probs + r * vocab;
        float* g = dlogits + r * vocab;
        for (std::int64_t j = 0; j < vocab; ++j)
            g[j] = p[j] * scale;
        g[targets[r]] -= scale;
    }
}

} // namespace shardscope::kernels
