#pragma once
// Runtime choice of the AVX2 code paths of the CPU kernels. The build targets baseline x86-64
// (SSE2), so the vector loops are compiled for AVX2 per function (target attribute) and picked
// once at run time. The AVX2 paths use no FMA, so each element's float expression rounds exactly
// as the scalar loop's does and both paths give the same bits.
namespace shardscope::kernels {

#if defined(__x86_64__) && defined(__GNUC__)
#define SHARDSCOPE_X86_SIMD 1
#define SHARDSCOPE_TARGET_AVX2 __attribute__((target("avx2")))
#define SHARDSCOPE_TARGET_AVX2_FMA __attribute__((target("avx2,fma")))
inline bool haveAvx2() {
    static const bool have = __builtin_cpu_supports("avx2") != 0;
    return have;
}
// For kernels with no bitwise contract (GELU's polynomial e^x), which may contract into FMA.
inline bool haveAvx2Fma() {
    static const bool have =
        __builtin_cpu_supports("avx2") != 0 && __builtin_cpu_supports("fma") != 0;
    return have;
}
#else
#define SHARDSCOPE_X86_SIMD 0
#define SHARDSCOPE_TARGET_AVX2
#define SHARDSCOPE_TARGET_AVX2_FMA
inline bool haveAvx2() {
    return false;
}
inline bool haveAvx2Fma() {
    return false;
}
#endif

} // namespace shardscope::kernels
