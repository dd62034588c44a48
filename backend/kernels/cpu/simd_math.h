#pragma once
// Vector math shared by the CPU kernels' AVX2 + FMA paths (kernels/cpu/simd.h picks them).
// Not bitwise equal to libm: for kernels whose contract is fp32 tolerance (GELU, softmax).
#include "kernels/cpu/simd.h"

#if SHARDSCOPE_X86_SIMD
#include <immintrin.h>

namespace shardscope::kernels {

// e^x for eight floats (Cephes' expf: x = n·ln2 + r, |r| ≤ ln2/2, a degree-6 polynomial in r,
// 2^n put into the exponent): within 2 ulp of expf. x is clamped to [−87, 88.7], where 2^n stays a
// normal float: below −87 it returns ≈ 1.6e−38 instead of a smaller value or 0, which a sum
// of exponentials (softmax) or tanh via e^{2u} (GELU) cannot tell from 0.
SHARDSCOPE_TARGET_AVX2_FMA inline __m256 exp8(__m256 x) {
    x = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(-87.0f)), _mm256_set1_ps(88.7f));
    const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                     _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
    __m256 p = _mm256_set1_ps(1.9875691500e-4f);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
    p = _mm256_fmadd_ps(_mm256_mul_ps(p, r), r, _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
    const __m256i bias =
        _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    return _mm256_mul_ps(p, _mm256_castsi256_ps(bias));
}

} // namespace shardscope::kernels

#endif
