#pragma once
// The optimizer step of ZeRO-Offload: AdamW over master weights and Adam m, v that live in the
// host tier, and the host-side conversions that carry states between tiers.
//
// Note: the element update is the float expression of kernels/cpu/adamw.h and the CUDA kernel,
// evaluated in the same order over the scalars of core/numeric.h, so an offloaded run's weights
// are bitwise those of the same run on the device. Threads split the range into contiguous
// chunks; each element is computed exactly once, so the thread count never changes a bit.
#include "core/numeric.h"

#include <cstdint>

namespace shardscope::offload {

// Threads the host optimizer uses for `n` elements: all hardware threads for large ranges,
// fewer where a thread would get under kMinElementsPerThread (start-up would dominate).
inline constexpr std::uint64_t kMinElementsPerThread = 1u << 16;
int hostThreads(std::uint64_t n, int maxThreads = 0); // maxThreads 0: hardware concurrency

// p, m, v: n fp32 values; grads: n values, bf16 or fp32. threads 0: hostThreads(n).
void hostAdamW(const AdamWScalars& s, float* params, const void* grads, bool gradsBf16, float* m,
               float* v, std::uint64_t n, int threads = 0);

// The plain scalar loop (one thread, no chunking): the benchmark's baseline.
void hostAdamWScalar(const AdamWScalars& s, float* params, const void* grads, bool gradsBf16,
                     float* m, float* v, std::uint64_t n);

// out[i] = RNE bf16 of in[i] (core/numeric.h).
void hostToBf16(const float* in, Bf16* out, std::uint64_t n);
// dst[i] += src[i] in the working dtype: bf16 adds in fp32 and rounds once (as Ops::accumulate).
void hostAccumulate(void* dst, const void* src, std::uint64_t n, bool bf16);

} // namespace shardscope::offload
