#include "kernels/cpu/bf16.h"

#include "core/error.h"
#include "kernels/cpu/simd.h"

#if SHARDSCOPE_X86_SIMD
#include <immintrin.h>
#endif

namespace shardscope::kernels {

namespace {

#if SHARDSCOPE_X86_SIMD

constexpr std::size_t kAhead = 512; // elements: the inputs are prefetched this far ahead

// Eight at a time, the same integer recipe as core/numeric.h's toBf16 (round to nearest even,
// NaN quieted), so the bits are those of the scalar conversion.
SHARDSCOPE_TARGET_AVX2 std::size_t toBf16Avx2(const float* in, Bf16* out, std::size_t n) {
    const __m256i magnitude = _mm256_set1_epi32(0x7fffffff), inf = _mm256_set1_epi32(0x7f800000),
                  half = _mm256_set1_epi32(0x7fff), one = _mm256_set1_epi32(1),
                  quiet = _mm256_set1_epi32(0x40);
    const std::size_t vectorEnd = n - n % 8;
    for (std::size_t i = 0; i < vectorEnd; i += 8) {
        _mm_prefetch(reinterpret_cast<const char*>(in + i + kAhead), _MM_HINT_T0);
        const __m256i u = _mm256_castps_si256(_mm256_loadu_ps(in + i));
        const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(u, magnitude), inf);
        const __m256i rounding =
            _mm256_add_epi32(half, _mm256_and_si256(_mm256_srli_epi32(u, 16), one));
        const __m256i rounded = _mm256_srli_epi32(_mm256_add_epi32(u, rounding), 16);
        const __m256i quieted = _mm256_or_si256(_mm256_srli_epi32(u, 16), quiet);
        const __m256i r = _mm256_blendv_epi8(rounded, quieted, nan);
        const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(r, r), 0x08);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), _mm256_castsi256_si128(packed));
    }
    return vectorEnd;
}

SHARDSCOPE_TARGET_AVX2 std::size_t toFloatAvx2(const Bf16* in, float* out, std::size_t n) {
    const std::size_t vectorEnd = n - n % 8;
    for (std::size_t i = 0; i < vectorEnd; i += 8) {
        const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i),
                            _mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
    }
    return vectorEnd;
}

#endif

} // namespace

void toBf16(std::span<const float> in, std::span<Bf16> out) {
    if (in.size() != out.size()) throw Error(ErrorKind::Internal, "toBf16: size mismatch");
    std::size_t i = 0;
#if SHARDSCOPE_X86_SIMD
    if (haveAvx2()) i = toBf16Avx2(in.data(), out.data(), in.size());
#endif
    for (; i < in.size(); ++i)
        out[i] = toBf16(in[i]);
}

void toFloat(std::span<const Bf16> in, std::span<float> out) {
    if (in.size() != out.size()) throw Error(ErrorKind::Internal, "toFloat: size mismatch");
    std::size_t i = 0;
#if SHARDSCOPE_X86_SIMD
    if (haveAvx2()) i = toFloatAvx2(in.data(), out.data(), in.size());
#endif
    for (; i < in.size(); ++i)
        out[i] = toFloat(in[i]);
}

} // namespace shardscope::kernels
