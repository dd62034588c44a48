#pragma once
// The portable GEMM that gemm() uses when ShardScope is built without OpenBLAS
// (SHARDSCOPE_BLAS=BUILTIN, or no openblas.pc: a GPU machine whose only toolchain is CUDA +
// PyTorch). It is always compiled, so the unit tests compare it with a naive loop on every
// machine, including those where gemm() itself goes to OpenBLAS.
#include <cstdint>

namespace shardscope::kernels {

// gemm()'s contract: C[m×n] = alpha · op(A)[m×k] · op(B)[k×n] + beta · C, row-major, leading
// dimensions in elements; beta == 0 overwrites C without reading it (as BLAS: NaN in C does not
// survive). Single-threaded and cache-blocked (packed panels, a 6×8 register tile the compiler
// vectorises); the order of additions depends only on m, n and k, so results are deterministic
// and independent of the thread or machine that runs it (for one binary).
void gemmBuiltin(bool transA, bool transB, std::int64_t m, std::int64_t n, std::int64_t k,
                 float alpha, const float* a, std::int64_t lda, const float* b, std::int64_t ldb,
                 float beta, float* c, std::int64_t ldc);

} // namespace shardscope::kernels
