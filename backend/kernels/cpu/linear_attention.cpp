// The GEMM-shaped ops: linear layers and causal attention (both run their matrix products
// through kernels::gemm so the GEMM timer sees all of them).
#include "core/error.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/ops.h"
#include "kernels/cpu/simd.h"
#include "kernels/cpu/simd_math.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace shardscope::kernels {

namespace {

// dbias[j] += Σ_r dy[r][j], rows added in order (the same bits as one row at a time), four rows
// per pass over dbias so the loop is bound by reading dy, not by dbias's loads and stores.
void columnSums(const float* __restrict dy, float* __restrict dbias, std::int64_t rows,
                std::int64_t out) {
    std::int64_t r = 0;
    for (; r + 4 <= rows; r += 4) {
        const float* __restrict a = dy + r * out;
        const float* __restrict b = a + out;
        const float* __restrict c = b + out;
        const float* __restrict e = c + out;
        for (std::int64_t j = 0; j < out; ++j)
            dbias[j] = (((dbias[j] + a[j]) + b[j]) + c[j]) + e[j];
    }
    for (; r < rows; ++r) {
        const float* __restrict a = dy + r * out;
        for (std::int64_t j = 0; j < out; ++j)
            dbias[j] += a[j];
    }
}

} // namespace

namespace {

// The bias is broadcast into y first so one GEMM with beta = 1 finishes the job; the beta.
float biasIntoOutput(const float* bias, float* y, std::int64_t rows, std::int64_t out,
                     bool accumulate) {
    if (bias) {
        for (std::int64_t r = 0; r < rows; ++r) {
            float* yr = y + r * out;
            if (accumulate)
                for (std::int64_t j = 0; j < out; ++j)
                    yr[j] += bias[j];
            else
                std::memcpy(yr, bias, static_cast<std::size_t>(out) * sizeof(float));
        }
    }
    return (bias || accumulate) ? 1.0f : 0.0f;
}

} // namespace

void linearForward(const float* x, const float* w, const float* bias, float* y, std::int64_t rows,
                   std::int64_t in, std::int64_t out, bool accumulate) {
    const float beta = biasIntoOutput(bias, y, rows, out, accumulate);
    gemm(false, false, rows, out, in, 1.0f, x, in, w, out, beta, y, out);
}

void linearBackward(const float* dy, const float* x, const float* w, float* dx, float* dw,
                    float* dbias, std::int64_t rows, std::int64_t in, std::int64_t out) {
    if (dx) gemm(false, true, rows, in, out, 1.0f, dy, out, w, out, 1.0f, dx, in);
    if (dw) gemm(true, false, in, out, rows, 1.0f, x, in, dy, out, 1.0f, dw, out);
    if (dbias) columnSums(dy, dbias, rows, out);
}

void linearForwardBf16(const Bf16* x, const Bf16* w, const float* bias, float* y, std::int64_t rows,
                       std::int64_t in, std::int64_t out, bool accumulate) {
    const float beta = biasIntoOutput(bias, y, rows, out, accumulate);
    gemmBf16(false, false, rows, out, in, 1.0f, x, in, w, out, beta, y, out);
}

void linearBackwardBf16(const float* dy, const Bf16* dyBf16, const Bf16* xBf16, const Bf16* w,
                        float* dx, float* dw, float* dbias, std::int64_t rows, std::int64_t in,
                        std::int64_t out) {
    if (dx) gemmBf16(false, true, rows, in, out, 1.0f, dyBf16, out, w, out, 1.0f, dx, in);
    if (dw) gemmBf16(true, false, in, out, rows, 1.0f, xBf16, in, dyBf16, out, 1.0f, dw, out);
    if (dbias) columnSums(dy, dbias, rows, out);
}

namespace {

// Row-wise causal softmax in place: row i keeps columns 0..i, the rest become 0.
void causalSoftmaxScalar(float* p, std::int64_t seq) {
    for (std::int64_t i = 0; i < seq; ++i) {
        float* row = p + i * seq;
        float maxv = row[0];
        for (std::int64_t j = 1; j <= i; ++j)
            maxv = std::max(maxv, row[j]);
        float sum = 0.0f;
        for (std::int64_t j = 0; j <= i; ++j) {
            row[j] = std::exp(row[j] - maxv);
            sum += row[j];
        }
        const float inv = 1.0f / sum;
        for (std::int64_t j = 0; j <= i; ++j)
            row[j] *= inv;
        for (std::int64_t j = i + 1; j < seq; ++j)
            row[j] = 0.0f;
    }
}

// Σ_j row[j] · prow[j] over j < n, the softmax backward's per-row dot product.
float dotScalar(const float* row, const float* prow, std::int64_t n) {
    float dot = 0.0f;
    for (std::int64_t j = 0; j < n; ++j)
        dot += row[j] * prow[j];
    return dot;
}

#if SHARDSCOPE_X86_SIMD

SHARDSCOPE_TARGET_AVX2_FMA inline float horizontalSum(__m256 v) {
    __m128 x = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    x = _mm_add_ps(x, _mm_movehl_ps(x, x));
    return _mm_cvtss_f32(_mm_add_ss(x, _mm_movehdup_ps(x)));
}
SHARDSCOPE_TARGET_AVX2_FMA inline float horizontalMax(__m256 v) {
    __m128 x = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    x = _mm_max_ps(x, _mm_movehl_ps(x, x));
    return _mm_cvtss_f32(_mm_max_ss(x, _mm_movehdup_ps(x)));
}
// Lanes [0, n) of eight set (n ≤ 8).
SHARDSCOPE_TARGET_AVX2_FMA inline __m256i firstLanes(std::int64_t n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)),
                              _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// The same softmax eight columns at a time (polynomial e^x; sums in eight lanes).
SHARDSCOPE_TARGET_AVX2_FMA void causalSoftmaxAvx2(float* p, std::int64_t seq) {
    for (std::int64_t i = 0; i < seq; ++i) {
        float* row = p + i * seq;
        const std::int64_t len = i + 1, end = len - len % 8;
        __m256 vmax = _mm256_set1_ps(row[0]);
        for (std::int64_t j = 0; j < end; j += 8)
            vmax = _mm256_max_ps(vmax, _mm256_loadu_ps(row + j));
        float maxv = horizontalMax(vmax);
        for (std::int64_t j = end; j < len; ++j)
            maxv = std::max(maxv, row[j]);
        const __m256 m = _mm256_set1_ps(maxv);
        __m256 vsum = _mm256_setzero_ps();
        for (std::int64_t j = 0; j < end; j += 8) {
            const __m256 e = exp8(_mm256_sub_ps(_mm256_loadu_ps(row + j), m));
            _mm256_storeu_ps(row + j, e);
            vsum = _mm256_add_ps(vsum, e);
        }
        if (end < len) {
            const __m256i mask = firstLanes(len - end);
            const __m256 e =
                _mm256_and_ps(exp8(_mm256_sub_ps(_mm256_maskload_ps(row + end, mask), m)),
                              _mm256_castsi256_ps(mask));
            _mm256_maskstore_ps(row + end, mask, e);
            vsum = _mm256_add_ps(vsum, e);
        }
        const __m256 inv = _mm256_set1_ps(1.0f / horizontalSum(vsum));
        for (std::int64_t j = 0; j < end; j += 8)
            _mm256_storeu_ps(row + j, _mm256_mul_ps(_mm256_loadu_ps(row + j), inv));
        if (end < len) {
            const __m256i mask = firstLanes(len - end);
            _mm256_maskstore_ps(row + end, mask,
                                _mm256_mul_ps(_mm256_maskload_ps(row + end, mask), inv));
        }
        for (std::int64_t j = len; j < seq; ++j)
            row[j] = 0.0f;
    }
}

SHARDSCOPE_TARGET_AVX2_FMA float dotAvx2(const float* row, const float* prow, std::int64_t n) {
    const std::int64_t end = n - n % 8;
    __m256 acc = _mm256_setzero_ps();
    for (std::int64_t j = 0; j < end; j += 8)
        acc = _mm256_fmadd_ps(_mm256_loadu_ps(row + j), _mm256_loadu_ps(prow + j), acc);
    float dot = horizontalSum(acc);
    for (std::int64_t j = end; j < n; ++j)
        dot += row[j] * prow[j];
    return dot;
}

#endif

void causalSoftmax(float* p, std::int64_t seq) {
#if SHARDSCOPE_X86_SIMD
    if (haveAvx2Fma()) return causalSoftmaxAvx2(p, seq);
#endif
    causalSoftmaxScalar(p, seq);
}

float rowDot(const float* row, const float* prow, std::int64_t n) {
#if SHARDSCOPE_X86_SIMD
    if (haveAvx2Fma()) return dotAvx2(row, prow, n);
#endif
    return dotScalar(row, prow, n);
}

} // namespace

namespace {

// Causal attention in row blocks: query rows [r0, r1) only see keys [0, r1), so each block's
// products stop at r1 instead of seq (about 5/8 of the full products at four blocks). The
// skipped entries are the masked ones (P and dS are 0 there), so only exact zeros drop out of
// the sums. Blocks much smaller than this cost more in per-call overhead than they save.
// 64 rows measured fastest for the small preset's 128 × 128 × 50 heads through oneDNN (32 and
// 16 rows 2-5 % slower on the whole forward + backward, 48 rows and one block of 128 2-3 %);
// through OpenBLAS 32 rows had been.
constexpr std::int64_t kCausalBlock = 64;

} // namespace

void attentionForward(const float* qkv, float* probs, float* out, std::int64_t batch,
                      std::int64_t seq, std::int64_t heads, std::int64_t headDim) {
    const std::int64_t d = heads * headDim, block = kCausalBlock;
    const float scale = 1.0f / std::sqrt(static_cast<float>(headDim));
    for (std::int64_t b = 0; b < batch; ++b) {
        for (std::int64_t h = 0; h < heads; ++h) {
            const float* q = qkv + b * seq * 3 * d + h * headDim;
            const float* k = q + d;
            const float* v = q + 2 * d;
            float* p = probs + (b * heads + h) * seq * seq;
            float* o = out + b * seq * d + h * headDim;
            // S = scale · Q Kᵀ on and below the diagonal blocks; the softmax reads columns ≤ i
            // of row i only and writes every column (0 above the diagonal).
            for (std::int64_t r0 = 0; r0 < seq; r0 += block) {
                const std::int64_t r1 = std::min(seq, r0 + block);
                gemm(false, true, r1 - r0, r1, headDim, scale, q + r0 * 3 * d, 3 * d, k, 3 * d,
                     0.0f, p + r0 * seq, seq);
            }
            causalSoftmax(p, seq);
            for (std::int64_t r0 = 0; r0 < seq; r0 += block) {
                const std::int64_t r1 = std::min(seq, r0 + block);
                gemm(false, false, r1 - r0, headDim, r1, 1.0f, p + r0 * seq, seq, v, 3 * d, 0.0f,
                     o + r0 * d, d);
            }
        }
    }
}

void attentionBackward(const float* dout, const float* qkv, const float* probs, float* dqkv,
                       std::span<float> scratch, std::int64_t batch, std::int64_t seq,
                       std::int64_t heads, std::int64_t headDim) {
    if (static_cast<std::int64_t>(scratch.size()) < seq * seq)
        throw Error(ErrorKind::Internal, "attentionBackward: scratch smaller than seq²");
    const std::int64_t d = heads * headDim, block = kCausalBlock;
    const float scale = 1.0f / std::sqrt(static_cast<float>(headDim));
    float* ds = scratch.data();
    for (std::int64_t b = 0; b < batch; ++b) {
        for (std::int64_t h = 0; h < heads; ++h) {
            const std::int64_t offset = b * seq * 3 * d + h * headDim;
            const float* q = qkv + offset;
            const float* k = q + d;
            const float* v = q + 2 * d;
            float* dq = dqkv + offset;
            float* dk = dq + d;
            float* dv = dq + 2 * d;
            const float* p = probs + (b * heads + h) * seq * seq;
            const float* dO = dout + b * seq * d + h * headDim;
            // Row block [r0, r1) of queries reaches keys [0, r1); column block [c0, c1) of keys
            // is reached by queries [c0, seq).
            for (std::int64_t r0 = 0; r0 < seq; r0 += block) {
                const std::int64_t r1 = std::min(seq, r0 + block);
                gemm(false, true, r1 - r0, r1, headDim, 1.0f, dO + r0 * d, d, v, 3 * d, 0.0f,
                     ds + r0 * seq,
                     seq); // dP
                gemm(true, false, r1 - r0, headDim, seq - r0, 1.0f, p + r0 * seq + r0, seq,
                     dO + r0 * d, d, 0.0f, dv + r0 * 3 * d, 3 * d); // dV = Pᵀ dO
            }
            // Softmax backward: dS = P ⊙ (dP − Σ_j dP·P); P is 0 above the diagonal.
            for (std::int64_t i = 0; i < seq; ++i) {
                float* row = ds + i * seq;
                const float* prow = p + i * seq;
                const float dot = rowDot(row, prow, i + 1);
                for (std::int64_t j = 0; j <= i; ++j)
                    row[j] = prow[j] * (row[j] - dot);
                for (std::int64_t j = i + 1; j < seq; ++j)
                    row[j] = 0.0f;
            }
            for (std::int64_t r0 = 0; r0 < seq; r0 += block) {
                const std::int64_t r1 = std::min(seq, r0 + block);
                gemm(false, false, r1 - r0, headDim, r1, scale, ds + r0 * seq, seq, k, 3 * d, 0.0f,
                     dq + r0 * 3 * d,
                     3 * d); // dQ = scale · dS K
                gemm(true, false, r1 - r0, headDim, seq - r0, scale, ds + r0 * seq + r0, seq,
                     q + r0 * 3 * d, 3 * d, 0.0f, dk + r0 * 3 * d, 3 * d); // dK = scale · dSᵀ Q
            }
        }
    }
}

} // namespace shardscope::kernels
