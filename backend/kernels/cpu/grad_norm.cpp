#include "kernels/cpu/grad_norm.h"

#include "kernels/cpu/simd.h"

#include <algorithm>
#include <bit>
#include <cmath>

#if SHARDSCOPE_X86_SIMD
#include <immintrin.h>
#endif

namespace shardscope::kernels {

namespace {

__extension__ typedef unsigned __int128 U128;

Uint128 parts(U128 v) {
    return {static_cast<std::uint64_t>(v), static_cast<std::uint64_t>(v >> 64)};
}

// ---- max |g|: the largest sign-cleared bit pattern is the largest magnitude, and anything at or
// above the infinity pattern (Inf, NaN) means "not finite". Integer max, so the loops vectorise.

[[gnu::always_inline]] inline std::uint32_t magnitude(float f) {
    return std::bit_cast<std::uint32_t>(f) & 0x7fffffffu;
}
[[gnu::always_inline]] inline std::uint16_t magnitude(Bf16 b) {
    return b.bits & 0x7fffu;
}

template <class T> using BitsOf = decltype(magnitude(T{}));

template <class T>
[[gnu::always_inline]] inline BitsOf<T> maxMagnitude(const T* g, std::uint64_t n) {
    BitsOf<T> m = 0;
    for (std::uint64_t i = 0; i < n; ++i)
        m = std::max(m, magnitude(g[i]));
    return m;
}
template <class T> BitsOf<T> maxScalar(const T* g, std::uint64_t n) {
    return maxMagnitude(g, n);
}
template <class T> SHARDSCOPE_TARGET_AVX2 BitsOf<T> maxAvx2(const T* g, std::uint64_t n) {
    return maxMagnitude(g, n);
}
template <class T> BitsOf<T> maxBits(const T* g, std::uint64_t n) {
    return haveAvx2() ? maxAvx2(g, n) : maxScalar(g, n);
}

float asFloat(float f) {
    return f;
}
float asFloat(Bf16 b) {
    return toFloat(b);
}

// ---- Σ trunc(g² · 2^shift) ----

// One element in integers: g = m · 2^E (m < 2^24), so g² · 2^shift = m² · 2^(2E + shift).
U128 scaledSquare(float g, int shift) {
    const std::uint32_t u = std::bit_cast<std::uint32_t>(g);
    const std::uint32_t field = (u >> 23) & 0xffu;
    const std::uint64_t mant = field == 0 ? (u & 0x7fffffu) : ((u & 0x7fffffu) | 0x800000u);
    const int e = field == 0 ? -149 : static_cast<int>(field) - 150;
    const std::uint64_t sq = mant * mant; // < 2^48
    const int s = 2 * e + shift;
    if (s >= 0) return static_cast<U128>(sq) << s; // the precondition keeps this below 2^125
    return s > -64 ? static_cast<U128>(sq >> -s) : 0;
}

template <class T> U128 sumScalar(const T* g, std::uint64_t n, int shift) {
    U128 sum = 0;
    for (std::uint64_t i = 0; i < n; ++i)
        sum += scaledSquare(asFloat(g[i]), shift);
    return sum;
}

#if SHARDSCOPE_X86_SIMD

// In doubles, four lanes at a time. y = g² · 2^shift is exact (≤ 48 significant bits, < 2^125)
// and t = floor(y) is the element's term. t is cut into three signed pieces without further
// rounding error: adding and subtracting 1.5 · 2^136 rounds t to the nearest multiple of 2^84
// (h), the rest r = t − h is exact (|r| ≤ 2^83), and 1.5 · 2^94 likewise cuts r into a multiple
// of 2^42 (m) and |l| ≤ 2^41. Each lane sums 2^11 values of each piece exactly in a double
// (h/2^84, m/2^42 and l stay below 2^52 in magnitude) before they are folded into the
// 128-bit total.
struct Limbs {
    __m256d h, m, l;
};

SHARDSCOPE_TARGET_AVX2 inline void addLimbs(__m256d x, __m256d scale, Limbs& a) {
    const __m256d c84 = _mm256_set1_pd(0x1.8p136), c42 = _mm256_set1_pd(0x1.8p94);
    const __m256d t = _mm256_floor_pd(_mm256_mul_pd(_mm256_mul_pd(x, x), scale));
    const __m256d h = _mm256_sub_pd(_mm256_add_pd(t, c84), c84);
    const __m256d r = _mm256_sub_pd(t, h);
    const __m256d m = _mm256_sub_pd(_mm256_add_pd(r, c42), c42);
    a.h = _mm256_add_pd(a.h, h);
    a.m = _mm256_add_pd(a.m, m);
    a.l = _mm256_add_pd(a.l, _mm256_sub_pd(r, m));
}

SHARDSCOPE_TARGET_AVX2 inline U128 foldLimbs(const Limbs& a) {
    __extension__ typedef __int128 S128;
    alignas(32) double v[3][4];
    _mm256_store_pd(v[0], a.h);
    _mm256_store_pd(v[1], a.m);
    _mm256_store_pd(v[2], a.l);
    S128 sum = 0;
    for (int lane = 0; lane < 4; ++lane)
        sum +=
            static_cast<S128>(static_cast<std::int64_t>(v[0][lane] * 0x1p-84)) * (S128{1} << 84) +
            static_cast<S128>(static_cast<std::int64_t>(v[1][lane] * 0x1p-42)) * (S128{1} << 42) +
            static_cast<S128>(static_cast<std::int64_t>(v[2][lane]));
    return static_cast<U128>(sum); // the total is ≥ 0; partial sums wrap consistently
}

SHARDSCOPE_TARGET_AVX2 inline __m256 load8(const float* p) {
    return _mm256_loadu_ps(p);
}
SHARDSCOPE_TARGET_AVX2 inline __m256 load8(const Bf16* p) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}

template <class T> SHARDSCOPE_TARGET_AVX2 U128 sumAvx2(const T* g, std::uint64_t n, int shift) {
    constexpr std::uint64_t kPrefetchBytes = 2048;
    constexpr std::uint64_t kBlock = std::uint64_t{1}
                                     << 13; // 2^10 vectors of 8: 2^11 values per lane
    const __m256d scale = _mm256_set1_pd(std::ldexp(1.0, shift));
    U128 sum = 0;
    std::uint64_t i = 0;
    const std::uint64_t vectorEnd = n - n % 8;
    while (i < vectorEnd) {
        const std::uint64_t end = std::min(vectorEnd, i + kBlock);
        Limbs a{_mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd()};
        for (; i < end; i += 8) {
            // Far ahead: the loop is long per cache line, so the out-of-order window alone
            // keeps too few misses in flight to stream from memory.
            _mm_prefetch(reinterpret_cast<const char*>(g + i) + kPrefetchBytes, _MM_HINT_T0);
            const __m256 x = load8(g + i);
            addLimbs(_mm256_cvtps_pd(_mm256_castps256_ps128(x)), scale, a);
            addLimbs(_mm256_cvtps_pd(_mm256_extractf128_ps(x, 1)), scale, a);
        }
        sum += foldLimbs(a);
    }
    return sum + sumScalar(g + vectorEnd, n - vectorEnd, shift);
}

#endif

template <class T> Uint128 sumSquares(const T* g, std::uint64_t n, int shift) {
#if SHARDSCOPE_X86_SIMD
    if (haveAvx2()) return parts(sumAvx2(g, n, shift));
#endif
    return parts(sumScalar(g, n, shift));
}

} // namespace

AbsMax absMax(const float* g, std::uint64_t n) {
    const std::uint32_t m = maxBits(g, n);
    if (m >= 0x7f800000u) return {false, 0};
    return {true, std::bit_cast<float>(m)};
}

AbsMax absMax(const Bf16* g, std::uint64_t n) {
    const std::uint16_t m = maxBits(g, n);
    if (m >= 0x7f80u) return {false, 0};
    return {true, toFloat(Bf16{m})};
}

Uint128 sumSquaresFixed(const float* g, std::uint64_t n, int shift) {
    return sumSquares(g, n, shift);
}
Uint128 sumSquaresFixed(const Bf16* g, std::uint64_t n, int shift) {
    return sumSquares(g, n, shift);
}

Uint128 sumSquaresFixedReference(const float* g, std::uint64_t n, int shift) {
    U128 sum = 0;
    for (std::uint64_t i = 0; i < n; ++i) {
        const double sq = static_cast<double>(g[i]) * static_cast<double>(g[i]);
        sum += static_cast<U128>(std::ldexp(sq, shift));
    }
    return parts(sum);
}

} // namespace shardscope::kernels
