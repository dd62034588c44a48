// The GEMM-shaped ops on CUDA: cuBLAS GEMMs (fp32, or bf16 inputs with fp32 accumulation),
// linear layers and causal attention. Host code only (the small kernels they need live in the
// .cu files), so it compiles with the C++ compiler and its warnings.
//
// Row-major through column-major cuBLAS: a row-major C = op(A)·op(B) is the column-major
// Cᵀ = op(B)ᵀ·op(A)ᵀ, so every call swaps the operands and m/n instead of transposing data.
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/ops.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cublas_v2.h>
#include <string>

namespace shardscope::kernels::cuda {

[[noreturn]] void throwCublasError(int status, const char* expr, const char* file, int line) {
    const auto st = static_cast<cublasStatus_t>(status);
    throw Error(ErrorKind::Internal, std::string(file) + ":" + std::to_string(line) + ": " + expr +
                                         " failed: " + cublasGetStatusName(st) + " (" +
                                         cublasGetStatusString(st) + ")");
}

Blas::Blas(Stream stream) : stream_(stream) {
    cublasHandle_t h = nullptr;
    CUBLAS_CHECK(cublasCreate(&h));
    handle_ = h;
    try {
        CUBLAS_CHECK(cublasSetStream(h, stream));
    } catch (...) {
        cublasDestroy(h);
        throw;
    }
}

Blas::~Blas() {
    if (handle_) cublasDestroy(handle_); // nothing useful to do with a failure in a destructor
}

void Blas::setWorkspace(void* workspace, std::size_t bytes) {
    // cublasSetStream resets the workspace to cuBLAS's default: the stream is set once, in the
    // constructor, so this call sticks.
    CUBLAS_CHECK(cublasSetWorkspace(handle_, workspace, bytes));
    workspaceBytes_ = bytes;
}

std::size_t recommendedBlasWorkspaceBytes(int computeCapabilityMajor) {
    constexpr std::size_t MiB = std::size_t{1} << 20;
    return computeCapabilityMajor >= 9 ? 32 * MiB : 4 * MiB;
}

namespace {

int toInt(std::int64_t v, const char* what) {
    if (v < 0 || v > INT_MAX)
        throw Error(ErrorKind::Internal, std::string("gemm: ") + what + " = " + std::to_string(v) +
                                             " is outside cuBLAS's 32-bit range");
    return static_cast<int>(v);
}

// Row-major, strided-batched when batch > 1 (stride* in elements between consecutive matrices).
void gemmBatched(Blas& blas, bool transA, bool transB, std::int64_t m, std::int64_t n,
                 std::int64_t k, float alpha, const void* a, std::int64_t lda, std::int64_t strideA,
                 const void* b, std::int64_t ldb, std::int64_t strideB, float beta, float* c,
                 std::int64_t ldc, std::int64_t strideC, std::int64_t batch, Precision precision) {
    if (m == 0 || n == 0 || batch == 0) return;
    const cudaDataType_t ab = precision == Precision::Fp32 ? CUDA_R_32F : CUDA_R_16BF;
    const cublasOperation_t opA = transA ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t opB = transB ? CUBLAS_OP_T : CUBLAS_OP_N;
    const int im = toInt(m, "m"), in = toInt(n, "n"), ik = toInt(k, "k");
    const int ilda = toInt(lda, "lda"), ildb = toInt(ldb, "ldb"), ildc = toInt(ldc, "ldc");
    // CUBLAS_COMPUTE_32F: fp32 accumulation, and no TF32 for fp32 inputs (that would need
    // CUBLAS_COMPUTE_32F_FAST_TF32), so fp32 mode is true fp32 and comparable to the CPU.
    if (batch == 1) {
        CUBLAS_CHECK(cublasGemmEx(blas.handle(), opB, opA, in, im, ik, &alpha, b, ab, ildb, a, ab,
                                  ilda, &beta, c, CUDA_R_32F, ildc, CUBLAS_COMPUTE_32F,
                                  CUBLAS_GEMM_DEFAULT));
        return;
    }
    CUBLAS_CHECK(cublasGemmStridedBatchedEx(blas.handle(), opB, opA, in, im, ik, &alpha, b, ab,
                                            ildb, strideB, a, ab, ilda, strideA, &beta, c,
                                            CUDA_R_32F, ildc, strideC, toInt(batch, "batch"),
                                            CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

template <class T>
void linearForwardImpl(Blas& blas, const T* x, const T* w, const float* bias, float* y,
                       std::int64_t rows, std::int64_t in, std::int64_t out, bool accumulate,
                       Precision p) {
    // As on CPU: broadcast the bias into y first, then one GEMM with beta = 1 finishes the job.
    if (bias) addBiasRows(bias, y, rows, out, accumulate, blas.stream());
    const float beta = (bias || accumulate) ? 1.0f : 0.0f;
    gemmBatched(blas, false, false, rows, out, in, 1.0f, x, in, 0, w, out, 0, beta, y, out, 0, 1,
                p);
}

template <class T>
void linearBackwardImpl(Blas& blas, const T* dy, const T* x, const T* w, float* dx, float* dw,
                        float* dbias, std::int64_t rows, std::int64_t in, std::int64_t out,
                        Precision p) {
    if (dx)
        gemmBatched(blas, false, true, rows, in, out, 1.0f, dy, out, 0, w, out, 0, 1.0f, dx, in, 0,
                    1, p);
    if (dw)
        gemmBatched(blas, true, false, in, out, rows, 1.0f, x, in, 0, dy, out, 0, 1.0f, dw, out, 0,
                    1, p);
    if (dbias) columnSum(dy, dbias, rows, out, blas.stream());
}

} // namespace

void gemm(Blas& blas, bool transA, bool transB, std::int64_t m, std::int64_t n, std::int64_t k,
          float alpha, const void* a, std::int64_t lda, const void* b, std::int64_t ldb, float beta,
          float* c, std::int64_t ldc, Precision precision) {
    gemmBatched(blas, transA, transB, m, n, k, alpha, a, lda, 0, b, ldb, 0, beta, c, ldc, 0, 1,
                precision);
}

void linearForward(Blas& blas, const float* x, const float* w, const float* bias, float* y,
                   std::int64_t rows, std::int64_t in, std::int64_t out, bool accumulate) {
    linearForwardImpl(blas, x, w, bias, y, rows, in, out, accumulate, Precision::Fp32);
}

void linearForward(Blas& blas, const Bf16* x, const Bf16* w, const float* bias, float* y,
                   std::int64_t rows, std::int64_t in, std::int64_t out, bool accumulate) {
    linearForwardImpl(blas, x, w, bias, y, rows, in, out, accumulate, Precision::Bf16);
}

void linearBackward(Blas& blas, const float* dy, const float* x, const float* w, float* dx,
                    float* dw, float* dbias, std::int64_t rows, std::int64_t in, std::int64_t out) {
    linearBackwardImpl(blas, dy, x, w, dx, dw, dbias, rows, in, out, Precision::Fp32);
}

void linearBackward(Blas& blas, const Bf16* dy, const Bf16* x, const Bf16* w, float* dx, float* dw,
                    float* dbias, std::int64_t rows, std::int64_t in, std::int64_t out) {
    linearBackwardImpl(blas, dy, x, w, dx, dw, dbias, rows, in, out, Precision::Bf16);
}

// Per sequence b, the heads are one strided batch: head h's q/k/v start headDim apart inside a
// token's [3d] row, its probabilities seq² apart.
void attentionForward(Blas& blas, const float* qkv, float* probs, float* out, std::int64_t batch,
                      std::int64_t seq, std::int64_t heads, std::int64_t headDim) {
    const std::int64_t d = heads * headDim, ss = seq * seq;
    const float scale = 1.0f / std::sqrt(static_cast<float>(headDim));
    const Precision f32 = Precision::Fp32;
    for (std::int64_t b = 0; b < batch; ++b) {
        const float* q = qkv + b * seq * 3 * d;
        const float* k = q + d;
        const float* v = q + 2 * d;
        float* p = probs + b * heads * ss;
        gemmBatched(blas, false, true, seq, seq, headDim, scale, q, 3 * d, headDim, k, 3 * d,
                    headDim, 0.0f, p, seq, ss, heads, f32);
        causalSoftmaxForward(p, heads * seq, seq, blas.stream());
        gemmBatched(blas, false, false, seq, headDim, seq, 1.0f, p, seq, ss, v, 3 * d, headDim,
                    0.0f, out + b * seq * d, d, headDim, heads, f32);
    }
}

void attentionBackward(Blas& blas, const float* dout, const float* qkv, const float* probs,
                       float* dqkv, float* scratch, std::int64_t scratchFloats, std::int64_t batch,
                       std::int64_t seq, std::int64_t heads, std::int64_t headDim) {
    const std::int64_t d = heads * headDim, ss = seq * seq;
    if (scratchFloats < ss)
        throw Error(ErrorKind::Internal, "attentionBackward: scratch smaller than seq²");
    // As many heads per batched GEMM as the scratch holds dS matrices for.
    const std::int64_t group = std::min(heads, scratchFloats / ss);
    const float scale = 1.0f / std::sqrt(static_cast<float>(headDim));
    const Precision f32 = Precision::Fp32;
    for (std::int64_t b = 0; b < batch; ++b) {
        for (std::int64_t h0 = 0; h0 < heads; h0 += group) {
            const std::int64_t gh = std::min(group, heads - h0);
            const std::int64_t offset = b * seq * 3 * d + h0 * headDim;
            const float* q = qkv + offset;
            const float* k = q + d;
            const float* v = q + 2 * d;
            float* dq = dqkv + offset;
            float* dk = dq + d;
            float* dv = dq + 2 * d;
            const float* p = probs + (b * heads + h0) * ss;
            const float* dO = dout + b * seq * d + h0 * headDim;
            // dP = dO·Vᵀ, dV = Pᵀ·dO, dS = softmax'(dP), dQ = scale·dS·K, dK = scale·dSᵀ·Q.
            gemmBatched(blas, false, true, seq, seq, headDim, 1.0f, dO, d, headDim, v, 3 * d,
                        headDim, 0.0f, scratch, seq, ss, gh, f32);
            gemmBatched(blas, true, false, seq, headDim, seq, 1.0f, p, seq, ss, dO, d, headDim,
                        0.0f, dv, 3 * d, headDim, gh, f32);
            causalSoftmaxBackward(p, scratch, gh * seq, seq, blas.stream());
            gemmBatched(blas, false, false, seq, headDim, seq, scale, scratch, seq, ss, k, 3 * d,
                        headDim, 0.0f, dq, 3 * d, headDim, gh, f32);
            gemmBatched(blas, true, false, seq, headDim, seq, scale, scratch, seq, ss, q, 3 * d,
                        headDim, 0.0f, dk, 3 * d, headDim, gh, f32);
        }
    }
}

} // namespace shardscope::kernels::cuda
