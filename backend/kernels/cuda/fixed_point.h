#pragma once
// The exact global gradient norm's fixed-point terms (train/grad_norm.cpp) as two 64-bit halves:
// device code has no conversion from double to a 128-bit integer, so the term is split in
// double arithmetic and added with an explicit carry. __host__ __device__, so the host tests
// check the split against the CPU's unsigned __int128 arithmetic without a GPU.
//
// Note: every operation below is exact (g² of a float fits a double's 53 bits, ldexp scales by
// a power of two, the low half is bits v already has), so FMA contraction cannot change a term.
#include <cstdint>
#include <math.h> // ::ldexp, ::trunc: the overloads nvcc provides for device code too

#if defined(__CUDACC__)
#define SHARDSCOPE_HOST_DEVICE __host__ __device__
#else
#define SHARDSCOPE_HOST_DEVICE
#endif

namespace shardscope::kernels::cuda {

struct Uint128Parts {
    std::uint64_t lo, hi;
};

// a + b mod 2^128 (the CPU's unsigned __int128 addition).
SHARDSCOPE_HOST_DEVICE inline Uint128Parts addUint128(Uint128Parts a, Uint128Parts b) {
    const std::uint64_t lo = a.lo + b.lo;
    return {lo, a.hi + b.hi + (lo < a.lo ? 1u : 0u)};
}

// trunc(ldexp(double(g)², shift)) for a term below 2^126 (the caller's choice of shift).
SHARDSCOPE_HOST_DEVICE inline Uint128Parts fixedSquare(float g, int shift) {
    const double gd = static_cast<double>(g);
    const double v = ::ldexp(gd * gd, shift);
    const double hi = ::trunc(::ldexp(v, -64)); // < 2^62, an integer
    const double lo = v - ::ldexp(hi, 64);      // v's bits below 2^64: integral when hi > 0
    return {static_cast<std::uint64_t>(lo), static_cast<std::uint64_t>(hi)}; // toward zero
}

} // namespace shardscope::kernels::cuda
