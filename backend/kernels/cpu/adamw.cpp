#include "kernels/cpu/adamw.h"

#include "kernels/cpu/simd.h"

#include <cmath>

#if SHARDSCOPE_X86_SIMD
#include <immintrin.h>
#endif

namespace shardscope::kernels {

namespace {

float asFloat(float x) {
    return x;
}
float asFloat(Bf16 x) {
    return toFloat(x);
}

// The definition (core/numeric.h: adamwElement), one element at a time. The vector path below
// evaluates the same operations in the same order (no FMA), so both round identically.
template <class G>
void update(const AdamWScalars& s, float* p, const G* g, float* m, float* v, std::uint64_t n) {
    for (std::uint64_t i = 0; i < n; ++i)
        adamwElement(s, asFloat(g[i]), p[i], m[i], v[i]);
}

#if SHARDSCOPE_X86_SIMD

SHARDSCOPE_TARGET_AVX2 inline __m256 load8(const float* p) {
    return _mm256_loadu_ps(p);
}
SHARDSCOPE_TARGET_AVX2 inline __m256 load8(const Bf16* p) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}

// One pass over p, g, m, v (28 bytes per element with fp32 gradients): memory-bound.
template <class G>
SHARDSCOPE_TARGET_AVX2 void updateAvx2(const AdamWScalars& s, float* p, const G* g, float* m,
                                       float* v, std::uint64_t n) {
    const __m256 scale = _mm256_set1_ps(s.gradScale), b1 = _mm256_set1_ps(s.beta1),
                 b2 = _mm256_set1_ps(s.beta2), c1 = _mm256_set1_ps(1.0f - s.beta1),
                 c2 = _mm256_set1_ps(1.0f - s.beta2), vc = _mm256_set1_ps(s.vCorrection),
                 eps = _mm256_set1_ps(s.eps), decay = _mm256_set1_ps(s.decay),
                 step = _mm256_set1_ps(s.stepSize);
    const std::uint64_t vectorEnd = n - n % 8;
    constexpr std::uint64_t kAhead = 512; // elements: prefetch each stream ~2 KiB ahead
    for (std::uint64_t i = 0; i < vectorEnd; i += 8) {
        if (i % 16 == 0) { // once per cache line of the fp32 streams
            _mm_prefetch(reinterpret_cast<const char*>(p + i + kAhead), _MM_HINT_T0);
            _mm_prefetch(reinterpret_cast<const char*>(m + i + kAhead), _MM_HINT_T0);
            _mm_prefetch(reinterpret_cast<const char*>(v + i + kAhead), _MM_HINT_T0);
            _mm_prefetch(reinterpret_cast<const char*>(g + i + kAhead), _MM_HINT_T0);
        }
        const __m256 grad = _mm256_mul_ps(load8(g + i), scale);
        const __m256 mi =
            _mm256_add_ps(_mm256_mul_ps(b1, _mm256_loadu_ps(m + i)), _mm256_mul_ps(c1, grad));
        const __m256 vi = _mm256_add_ps(_mm256_mul_ps(b2, _mm256_loadu_ps(v + i)),
                                        _mm256_mul_ps(_mm256_mul_ps(c2, grad), grad));
        _mm256_storeu_ps(m + i, mi);
        _mm256_storeu_ps(v + i, vi);
        const __m256 denom = _mm256_add_ps(_mm256_div_ps(_mm256_sqrt_ps(vi), vc), eps);
        const __m256 pi = _mm256_sub_ps(_mm256_mul_ps(_mm256_loadu_ps(p + i), decay),
                                        _mm256_div_ps(_mm256_mul_ps(step, mi), denom));
        _mm256_storeu_ps(p + i, pi);
    }
    update(s, p + vectorEnd, g + vectorEnd, m + vectorEnd, v + vectorEnd, n - vectorEnd);
}

#endif

template <class G>
void dispatch(const AdamWScalars& s, float* p, const G* g, float* m, float* v, std::uint64_t n) {
#if SHARDSCOPE_X86_SIMD
    if (haveAvx2()) return updateAvx2(s, p, g, m, v, n);
#endif
    update(s, p, g, m, v, n);
}

} // namespace

void adamwUpdate(const AdamWScalars& s, float* params, const float* grads, float* m, float* v,
                 std::uint64_t n) {
    dispatch(s, params, grads, m, v, n);
}

void adamwUpdate(const AdamWScalars& s, float* params, const Bf16* grads, float* m, float* v,
                 std::uint64_t n) {
    dispatch(s, params, grads, m, v, n);
}

void adamwUpdateScalar(const AdamWScalars& s, float* params, const float* grads, float* m, float* v,
                       std::uint64_t n) {
    update(s, params, grads, m, v, n);
}

} // namespace shardscope::kernels
