#pragma once
// Row-major GEMMs with an optional per-thread timer so a benchmark can report which fraction of a
// step is spent in GEMM. fp32 runs through oneDNN where its kernels reach AVX-512 (about twice
// OpenBLAS's single-thread fp32 there: docs/performance.md), else through OpenBLAS (or, in a build
// without it, the built-in blocked kernel of gemm_builtin.h); bf16 operands with fp32
// accumulation run on the CPU's bf16 units through oneDNN where it has them.
//
// Note: the engine is chosen once per process, from the CPU alone (never from a timing: every
// rank must round alike; ranks on one CPU kind choose alike, the bf16 path is agreed by all
// ranks in the worker), or by SHARDSCOPE_GEMM=blas|onednn. ONEDNN_MAX_CPU_ISA masks oneDNN's
// kernels (AVX2 or below: OpenBLAS as before; below AVX512_CORE_BF16: no native bf16).
#include "core/numeric.h"

#include <cstdint>
#include <string>

namespace shardscope::kernels {

// C[m×n] = alpha · op(A)[m×k] · op(B)[k×n] + beta · C; leading dimensions in elements.
void gemm(bool transA, bool transB, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
          const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c,
          std::int64_t ldc);

// The same with bf16 operands, products accumulated and C kept in fp32. Only where
// nativeBf16Gemm(); throws Error(Internal) elsewhere.
void gemmBf16(bool transA, bool transB, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
              const Bf16* a, std::int64_t lda, const Bf16* b, std::int64_t ldb, float beta,
              float* c, std::int64_t ldc);
// The CPU has bf16 units oneDNN uses (AVX512-BF16, AMX-BF16), not masked.
bool nativeBf16Gemm();
// What runs gemm() and gemmBf16() here, for benchmarks and reports: "oneDNN avx512_core_bf16
// (fp32 and bf16)", "OpenBLAS Haswell", …
std::string gemmEngine();

struct GemmTimer {
    std::uint64_t ns = 0;
    std::uint64_t calls = 0;
    double flops = 0; // 2·m·n·k per call
};

// Installs a timer for GEMMs on the calling thread (nullptr = off, the default: no clock reads).
// Returns the previous one.
GemmTimer* setGemmTimer(GemmTimer* timer);

// OpenBLAS worker threads (≤ 0 leaves the library default / OPENBLAS_NUM_THREADS); the built-in
// GEMM always runs on the calling thread (blasThreads() = 1).
void setBlasThreads(int threads);
int blasThreads();

// OpenBLAS's name for the GEMM kernel it picked ("SkylakeX", "Haswell", "Prescott", …);
// "built-in (no OpenBLAS)" in a build without OpenBLAS.
std::string blasCoreName();
// A one-line hint when OpenBLAS picked a kernel far below what this CPU supports (releases older
// than the CPU fall back to the SSE3 "Prescott" kernel: 3–4× slower GEMM on AVX-512 machines);
// empty when all is well. OPENBLAS_CORETYPE is read when the library loads, so only the
// environment of a new process can change it.
std::string blasAdvice();

} // namespace shardscope::kernels
