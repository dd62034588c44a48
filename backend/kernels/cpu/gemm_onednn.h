#pragma once
// GEMMs through oneDNN's matmul (Debian's libdnnl): fp32, and bf16 operands with fp32
// accumulation where the CPU has bf16 units (AVX512-BF16, AMX-BF16). gemm.h picks the engine;
// this file is only compiled where CMake found oneDNN (SHARDSCOPE_HAVE_ONEDNN).
//
// Note: one thread per calling thread (ranks compute on one thread each), primitives cached per
// thread by shape, strides and scalars: the same call gives the same bits on every rank, in every
// strategy, on one CPU kind. oneDNN honours ONEDNN_MAX_CPU_ISA, so its kernels — and with them
// the bf16 units — can be masked for a comparison run.
#include "core/numeric.h"

#include <cstdint>
#include <string>

namespace shardscope::kernels::onednn {

// The instruction set oneDNN's kernels reach on this CPU under its mask, as oneDNN names it
// ("avx512_core_bf16", "avx512_core_amx", "avx2", …).
std::string isaName();
bool reachesAvx512(); // avx512_core or above
bool hasNativeBf16(); // avx512_core_bf16 or above (AMX included)

void gemm(bool transA, bool transB, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
          const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c,
          std::int64_t ldc);
void gemmBf16(bool transA, bool transB, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
              const Bf16* a, std::int64_t lda, const Bf16* b, std::int64_t ldb, float beta,
              float* c, std::int64_t ldc);

} // namespace shardscope::kernels::onednn
