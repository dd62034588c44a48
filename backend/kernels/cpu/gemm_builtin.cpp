#include "kernels/cpu/gemm_builtin.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace shardscope::kernels {

namespace {

// GotoBLAS-style blocking. A kMR×kNR tile of C stays in registers while the micro-kernel walks
// a kc-long packed sliver of op(A) (kMR rows) and of op(B) (kNR columns); a kKC×kNR sliver of B
// (8 KiB) stays in L1, a kMC×kKC block of A (120 KiB) in L2, a kKC×kNC panel of B (2 MiB) in L3.
// 6×8: twelve 128-bit accumulators plus operands fit the 16 SSE/NEON registers of the baseline
// ISA (no -march flags), and the same code becomes 6 × one 256-bit vector with AVX.
constexpr std::int64_t kMR = 6;
constexpr std::int64_t kNR = 8;
constexpr std::int64_t kKC = 256;
constexpr std::int64_t kMC = 120;  // multiple of kMR
constexpr std::int64_t kNC = 2048; // multiple of kNR

// Per-thread packing buffers, grown on demand: the CPU kernels call GEMM thousands of times per
// step with the same shapes, so allocating per call would dominate small products.
struct PackBuffers {
    std::vector<float> a;
    std::vector<float> b;
};
thread_local PackBuffers tlsPack;

// op(A)[i0 + i][p0 + p] for i < mc, p < kc, as strips of kMR rows: strip s starts at s·kMR·kc,
// element (p, r) of a strip is at p·kMR + r. Rows past mc are zero, so the micro-kernel never
// branches on the edge.
void packA(bool transA, const float* a, std::int64_t lda, std::int64_t i0, std::int64_t mc,
           std::int64_t p0, std::int64_t kc, float* out) {
    for (std::int64_t is = 0; is < mc; is += kMR) {
        const std::int64_t rows = std::min(kMR, mc - is);
        float* dst = out + is * kc;
        if (rows < kMR) std::fill(dst, dst + kMR * kc, 0.0f);
        if (transA) { // op(A)[i][p] = a[p·lda + i]: a row of a is contiguous in i
            for (std::int64_t p = 0; p < kc; ++p) {
                const float* src = a + (p0 + p) * lda + i0 + is;
                for (std::int64_t r = 0; r < rows; ++r)
                    dst[p * kMR + r] = src[r];
            }
        } else { // op(A)[i][p] = a[i·lda + p]: contiguous in p
            for (std::int64_t r = 0; r < rows; ++r) {
                const float* src = a + (i0 + is + r) * lda + p0;
                for (std::int64_t p = 0; p < kc; ++p)
                    dst[p * kMR + r] = src[p];
            }
        }
    }
}

// op(B)[p0 + p][j0 + j] for p < kc, j < nc, as strips of kNR columns: strip s starts at
// s·kNR·kc, element (p, c) of a strip is at p·kNR + c. Columns past nc are zero.
void packB(bool transB, const float* b, std::int64_t ldb, std::int64_t p0, std::int64_t kc,
           std::int64_t j0, std::int64_t nc, float* out) {
    for (std::int64_t js = 0; js < nc; js += kNR) {
        const std::int64_t cols = std::min(kNR, nc - js);
        float* dst = out + js * kc;
        if (cols < kNR) std::fill(dst, dst + kNR * kc, 0.0f);
        if (transB) { // op(B)[p][j] = b[j·ldb + p]: contiguous in p
            for (std::int64_t col = 0; col < cols; ++col) {
                const float* src = b + (j0 + js + col) * ldb + p0;
                for (std::int64_t p = 0; p < kc; ++p)
                    dst[p * kNR + col] = src[p];
            }
        } else { // op(B)[p][j] = b[p·ldb + j]: contiguous in j
            for (std::int64_t p = 0; p < kc; ++p) {
                const float* src = b + (p0 + p) * ldb + j0 + js;
                for (std::int64_t col = 0; col < cols; ++col)
                    dst[p * kNR + col] = src[col];
            }
        }
    }
}

// acc = Σ_p ap[p] ⊗ bp[p] over one packed sliver pair, p ascending.
#if defined(__GNUC__) || defined(__clang__)
// GCC/Clang vector extension (lowered to SSE, NEON, … by the compiler; no -march needed): the
// twelve accumulators are named values, so they live in registers. Plain loops over a local
// array are not vectorised by GCC 12 (it keeps the tile in memory: 1–2 GFLOP/s instead of ~10).
using Vec4 = float __attribute__((vector_size(16)));
static_assert(kNR == 8 && kMR == 6, "the micro-kernel is written for a 6x8 tile");

inline Vec4 load4(const float* p) {
    Vec4 v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

void microKernel(std::int64_t kc, const float* __restrict ap, const float* __restrict bp,
                 float (&acc)[kMR][kNR]) {
    Vec4 c00{}, c01{}, c10{}, c11{}, c20{}, c21{}, c30{}, c31{}, c40{}, c41{}, c50{}, c51{};
    for (std::int64_t p = 0; p < kc; ++p) {
        const Vec4 b0 = load4(bp + p * kNR);
        const Vec4 b1 = load4(bp + p * kNR + 4);
        const float* av = ap + p * kMR;
        // clang-format off
        c00 += av[0] * b0; c01 += av[0] * b1;
        c10 += av[1] * b0; c11 += av[1] * b1;
        c20 += av[2] * b0; c21 += av[2] * b1;
        c30 += av[3] * b0; c31 += av[3] * b1;
        c40 += av[4] * b0; c41 += av[4] * b1;
        c50 += av[5] * b0; c51 += av[5] * b1;
        // clang-format on
    }
    const Vec4 rows[kMR][2] = {{c00, c01}, {c10, c11}, {c20, c21},
                               {c30, c31}, {c40, c41}, {c50, c51}};
    for (std::int64_t r = 0; r < kMR; ++r) {
        std::memcpy(&acc[r][0], &rows[r][0], sizeof(Vec4));
        std::memcpy(&acc[r][4], &rows[r][1], sizeof(Vec4));
    }
}
#else
// Any other compiler: the same additions in the same order, scalar.
void microKernel(std::int64_t kc, const float* ap, const float* bp, float (&acc)[kMR][kNR]) {
    float t[kMR][kNR] = {};
    for (std::int64_t p = 0; p < kc; ++p)
        for (std::int64_t r = 0; r < kMR; ++r)
            for (std::int64_t col = 0; col < kNR; ++col)
                t[r][col] += ap[p * kMR + r] * bp[p * kNR + col];
    std::memcpy(acc, t, sizeof t);
}
#endif

} // namespace

void gemmBuiltin(bool transA, bool transB, std::int64_t m, std::int64_t n, std::int64_t k,
                 float alpha, const float* a, std::int64_t lda, const float* b, std::int64_t ldb,
                 float beta, float* c, std::int64_t ldc) {
    if (m <= 0 || n <= 0) return;
    // C = beta·C first; beta == 0 writes zeros without reading C (BLAS semantics).
    if (beta != 1.0f) {
        for (std::int64_t i = 0; i < m; ++i) {
            float* row = c + i * ldc;
            if (beta == 0.0f)
                std::fill(row, row + n, 0.0f);
            else
                for (std::int64_t j = 0; j < n; ++j)
                    row[j] *= beta;
        }
    }
    if (k <= 0 || alpha == 0.0f) return;

    PackBuffers& pack = tlsPack;
    const auto roundUp = [](std::int64_t x, std::int64_t to) { return (x + to - 1) / to * to; };
    const std::int64_t kcMax = std::min(k, kKC);
    const auto needA = static_cast<std::size_t>(roundUp(std::min(m, kMC), kMR) * kcMax);
    const auto needB = static_cast<std::size_t>(roundUp(std::min(n, kNC), kNR) * kcMax);
    if (pack.a.size() < needA) pack.a.resize(needA);
    if (pack.b.size() < needB) pack.b.resize(needB);

    // Every element of C receives its k-blocks in ascending order, each summed from zero in
    // ascending p: the order depends only on the shapes.
    for (std::int64_t jc = 0; jc < n; jc += kNC) {
        const std::int64_t nc = std::min(kNC, n - jc);
        for (std::int64_t pc = 0; pc < k; pc += kKC) {
            const std::int64_t kc = std::min(kKC, k - pc);
            packB(transB, b, ldb, pc, kc, jc, nc, pack.b.data());
            for (std::int64_t ic = 0; ic < m; ic += kMC) {
                const std::int64_t mc = std::min(kMC, m - ic);
                packA(transA, a, lda, ic, mc, pc, kc, pack.a.data());
                for (std::int64_t jr = 0; jr < nc; jr += kNR) {
                    const std::int64_t cols = std::min(kNR, nc - jr);
                    for (std::int64_t ir = 0; ir < mc; ir += kMR) {
                        const std::int64_t rows = std::min(kMR, mc - ir);
                        float acc[kMR][kNR];
                        microKernel(kc, pack.a.data() + ir * kc, pack.b.data() + jr * kc, acc);
                        for (std::int64_t r = 0; r < rows; ++r) {
                            float* out = c + (ic + ir + r) * ldc + jc + jr;
                            for (std::int64_t col = 0; col < cols; ++col)
                                out[col] += alpha * acc[r][col];
                        }
                    }
                }
            }
        }
    }
}

} // namespace shardscope::kernels
