#pragma once
// Row-major single-precision GEMM through OpenBLAS (or, in a build without it, the built-in
// blocked kernel of gemm_builtin.h), with an optional per-thread timer so a benchmark can report
// which fraction of a step is spent in GEMM.
#include <cstdint>
#include <string>

namespace shardscope::kernels {

// C[m×n] = alpha · op(A)[m×k] · op(B)[k×n] + beta · C; leading dimensions in elements.
void gemm(bool transA, bool transB, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
          const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c,
          std::int64_t ldc);

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
