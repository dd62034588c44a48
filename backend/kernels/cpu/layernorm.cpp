// LayerNorm forward/backward. Row statistics are accumulated in double: the rows are short
// (d ≤ a few thousand) and the extra precision keeps the gradient check tight for free.
#include "kernels/cpu/ops.h"
#include "kernels/cpu/simd.h"

#include <cmath>

#if SHARDSCOPE_X86_SIMD
#include <immintrin.h>
#endif

namespace shardscope::kernels {

namespace {

// The row sums Σx and Σ(x − μ)², and in backward Σg and Σg·x̂: serial double additions in the
// scalar loops. The AVX2 path adds eight lanes of doubles (two vectors of four) and folds them
// at the end of the row — another order, equally deterministic; every float expression per
// element is the scalar loop's (no FMA).
struct RowSums {
    double a = 0, b = 0;
};

RowSums meanSumsScalar(const float* xr, std::int64_t d) {
    double sum = 0.0;
    for (std::int64_t i = 0; i < d; ++i)
        sum += static_cast<double>(xr[i]);
    const double mu = sum / static_cast<double>(d);
    double var = 0.0;
    for (std::int64_t i = 0; i < d; ++i) {
        const double c = static_cast<double>(xr[i]) - mu;
        var += c * c;
    }
    return {mu, var};
}

RowSums backwardSumsScalar(const float* xr, const float* dy, const float* gamma, float m, float s,
                           float* dgamma, float* dbeta, std::int64_t d) {
    double sumG = 0.0, sumGX = 0.0;
    for (std::int64_t i = 0; i < d; ++i) {
        const float xhat = (xr[i] - m) * s;
        const float g = dy[i] * gamma[i];
        sumG += static_cast<double>(g);
        sumGX += static_cast<double>(g * xhat);
        dgamma[i] += dy[i] * xhat;
        dbeta[i] += dy[i];
    }
    return {sumG, sumGX};
}

#if SHARDSCOPE_X86_SIMD

SHARDSCOPE_TARGET_AVX2 inline double sum4(__m256d v) {
    const __m128d x = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
    return _mm_cvtsd_f64(_mm_add_sd(x, _mm_unpackhi_pd(x, x)));
}
// Adds the eight floats of v, widened, into lo (lanes 0–3) and hi (lanes 4–7).
SHARDSCOPE_TARGET_AVX2 inline void addWidened(__m256 v, __m256d& lo, __m256d& hi) {
    lo = _mm256_add_pd(lo, _mm256_cvtps_pd(_mm256_castps256_ps128(v)));
    hi = _mm256_add_pd(hi, _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)));
}

SHARDSCOPE_TARGET_AVX2 RowSums meanSumsAvx2(const float* xr, std::int64_t d) {
    const std::int64_t end = d - d % 8;
    __m256d lo = _mm256_setzero_pd(), hi = _mm256_setzero_pd();
    for (std::int64_t i = 0; i < end; i += 8)
        addWidened(_mm256_loadu_ps(xr + i), lo, hi);
    double sum = sum4(_mm256_add_pd(lo, hi));
    for (std::int64_t i = end; i < d; ++i)
        sum += static_cast<double>(xr[i]);
    const double mu = sum / static_cast<double>(d);
    const __m256d vmu = _mm256_set1_pd(mu);
    lo = _mm256_setzero_pd(), hi = _mm256_setzero_pd();
    for (std::int64_t i = 0; i < end; i += 8) {
        const __m256 x = _mm256_loadu_ps(xr + i);
        const __m256d c0 = _mm256_sub_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(x)), vmu);
        const __m256d c1 = _mm256_sub_pd(_mm256_cvtps_pd(_mm256_extractf128_ps(x, 1)), vmu);
        lo = _mm256_add_pd(lo, _mm256_mul_pd(c0, c0));
        hi = _mm256_add_pd(hi, _mm256_mul_pd(c1, c1));
    }
    double var = sum4(_mm256_add_pd(lo, hi));
    for (std::int64_t i = end; i < d; ++i) {
        const double c = static_cast<double>(xr[i]) - mu;
        var += c * c;
    }
    return {mu, var};
}

SHARDSCOPE_TARGET_AVX2 RowSums backwardSumsAvx2(const float* xr, const float* dy,
                                                const float* gamma, float m, float s, float* dgamma,
                                                float* dbeta, std::int64_t d) {
    const std::int64_t end = d - d % 8;
    const __m256 vm = _mm256_set1_ps(m), vs = _mm256_set1_ps(s);
    __m256d g0 = _mm256_setzero_pd(), g1 = _mm256_setzero_pd(), gx0 = _mm256_setzero_pd(),
            gx1 = _mm256_setzero_pd();
    for (std::int64_t i = 0; i < end; i += 8) {
        const __m256 dyi = _mm256_loadu_ps(dy + i);
        const __m256 xhat = _mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(xr + i), vm), vs);
        const __m256 g = _mm256_mul_ps(dyi, _mm256_loadu_ps(gamma + i));
        addWidened(g, g0, g1);
        addWidened(_mm256_mul_ps(g, xhat), gx0, gx1);
        _mm256_storeu_ps(dgamma + i,
                         _mm256_add_ps(_mm256_loadu_ps(dgamma + i), _mm256_mul_ps(dyi, xhat)));
        _mm256_storeu_ps(dbeta + i, _mm256_add_ps(_mm256_loadu_ps(dbeta + i), dyi));
    }
    const RowSums tail = backwardSumsScalar(xr + end, dy + end, gamma + end, m, s, dgamma + end,
                                            dbeta + end, d - end);
    return {sum4(_mm256_add_pd(g0, g1)) + tail.a, sum4(_mm256_add_pd(gx0, gx1)) + tail.b};
}

#endif

RowSums meanSums(const float* xr, std::int64_t d) {
#if SHARDSCOPE_X86_SIMD
    if (haveAvx2()) return meanSumsAvx2(xr, d);
#endif
    return meanSumsScalar(xr, d);
}

RowSums backwardSums(const float* xr, const float* dy, const float* gamma, float m, float s,
                     float* dgamma, float* dbeta, std::int64_t d) {
#if SHARDSCOPE_X86_SIMD
    if (haveAvx2()) return backwardSumsAvx2(xr, dy, gamma, m, s, dgamma, dbeta, d);
#endif
    return backwardSumsScalar(xr, dy, gamma, m, s, dgamma, dbeta, d);
}

} // namespace

void layerNormForward(const float* x, const float* gamma, const float* beta, float* out,
                      float* mean, float* rstd, std::int64_t rows, std::int64_t d) {
    for (std::int64_t r = 0; r < rows; ++r) {
        const float* xr = x + r * d;
        const RowSums st = meanSums(xr, d);
        const double var = st.b / static_cast<double>(d);
        const float m = static_cast<float>(st.a);
        const float s =
            static_cast<float>(1.0 / std::sqrt(var + static_cast<double>(kLayerNormEps)));
        float* o = out + r * d;
        for (std::int64_t i = 0; i < d; ++i)
            o[i] = (xr[i] - m) * s * gamma[i] + beta[i];
        mean[r] = m;
        rstd[r] = s;
    }
}

void layerNormBackward(const float* dout, const float* x, const float* mean, const float* rstd,
                       const float* gamma, float* dx, float* dgamma, float* dbeta,
                       std::int64_t rows, std::int64_t d) {
    for (std::int64_t r = 0; r < rows; ++r) {
        const float* xr = x + r * d;
        const float* dy = dout + r * d;
        const float m = mean[r];
        const float s = rstd[r];
        // dx = rstd · (g − mean(g) − x̂ · mean(g · x̂)) with g = dy · gamma.
        const RowSums sums = backwardSums(xr, dy, gamma, m, s, dgamma, dbeta, d);
        const float meanG = static_cast<float>(sums.a / static_cast<double>(d));
        const float meanGX = static_cast<float>(sums.b / static_cast<double>(d));
        float* dxr = dx + r * d;
        for (std::int64_t i = 0; i < d; ++i) {
            const float xhat = (xr[i] - m) * s;
            dxr[i] += s * (dy[i] * gamma[i] - meanG - xhat * meanGX);
        }
    }
}

} // namespace shardscope::kernels
