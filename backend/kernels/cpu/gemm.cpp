#include "kernels/cpu/gemm.h"

// SHARDSCOPE_HAVE_OPENBLAS comes from kernels/cpu/CMakeLists.txt: 1 when pkg-config found
// OpenBLAS (and SHARDSCOPE_BLAS is not BUILTIN), else 0 and GEMM is gemmBuiltin().
#if SHARDSCOPE_HAVE_OPENBLAS
#include <cblas.h>
#endif

#include "core/error.h"
#include "core/event.h"
#include "kernels/cpu/gemm_builtin.h"
#if SHARDSCOPE_HAVE_ONEDNN
#include "kernels/cpu/gemm_onednn.h"
#endif

#include <cstdlib>
#include <string_view>

namespace shardscope::kernels {

namespace {
thread_local GemmTimer* tlsTimer = nullptr;

// The engine of fp32 GEMMs (gemm.h's note): decided once, from the CPU or SHARDSCOPE_GEMM.
bool fp32ThroughOnednn() {
    static const bool use = [] {
        const char* forced = std::getenv("SHARDSCOPE_GEMM");
        const std::string_view want = forced ? forced : "";
        if (!want.empty() && want != "blas" && want != "onednn")
            throw Error(ErrorKind::InvalidArgument,
                        "SHARDSCOPE_GEMM=" + std::string(want) + ": expected blas or onednn");
#if SHARDSCOPE_HAVE_ONEDNN
        if (want == "onednn") return true;
        if (want == "blas") return false;
        return onednn::reachesAvx512();
#else
        if (want == "onednn")
            throw Error(ErrorKind::InvalidArgument,
                        "SHARDSCOPE_GEMM=onednn: this build has no oneDNN (libdnnl-dev)");
        return false;
#endif
    }();
    return use;
}

void timed(GemmTimer* timer, std::uint64_t begin, std::int64_t m, std::int64_t n, std::int64_t k) {
    if (!timer) return;
    timer->ns += monotonicNs() - begin;
    timer->calls += 1;
    timer->flops += 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
}

} // namespace

GemmTimer* setGemmTimer(GemmTimer* timer) {
    GemmTimer* previous = tlsTimer;
    tlsTimer = timer;
    return previous;
}

void gemm(bool transA, bool transB, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
          const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c,
          std::int64_t ldc) {
    GemmTimer* timer = tlsTimer;
    const std::uint64_t begin = timer ? monotonicNs() : 0;
#if SHARDSCOPE_HAVE_ONEDNN
    if (fp32ThroughOnednn()) {
        onednn::gemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
        return timed(timer, begin, m, n, k);
    }
#else
    (void)fp32ThroughOnednn(); // refused at the first GEMM too (the worker asks gemmEngine first)
#endif
#if SHARDSCOPE_HAVE_OPENBLAS
    cblas_sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans,
                transB ? CblasTrans : CblasNoTrans, static_cast<blasint>(m),
                static_cast<blasint>(n), static_cast<blasint>(k), alpha, a,
                static_cast<blasint>(lda), b, static_cast<blasint>(ldb), beta, c,
                static_cast<blasint>(ldc));
#else
    gemmBuiltin(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
#endif
    timed(timer, begin, m, n, k);
}

void gemmBf16(bool transA, bool transB, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
              const Bf16* a, std::int64_t lda, const Bf16* b, std::int64_t ldb, float beta,
              float* c, std::int64_t ldc) {
    if (!nativeBf16Gemm())
        throw Error(ErrorKind::Internal, "gemmBf16: this CPU (or build) has no native bf16 GEMM");
#if SHARDSCOPE_HAVE_ONEDNN
    GemmTimer* timer = tlsTimer;
    const std::uint64_t begin = timer ? monotonicNs() : 0;
    onednn::gemmBf16(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    timed(timer, begin, m, n, k);
#else
    (void)transA, (void)transB, (void)m, (void)n, (void)k, (void)alpha, (void)a, (void)lda;
    (void)b, (void)ldb, (void)beta, (void)c, (void)ldc;
#endif
}

bool nativeBf16Gemm() {
#if SHARDSCOPE_HAVE_ONEDNN
    static const bool have = [] {
        const char* forced = std::getenv("SHARDSCOPE_GEMM"); // blas: the OpenBLAS-only path
        return onednn::hasNativeBf16() && !(forced && std::string_view(forced) == "blas");
    }();
    return have;
#else
    return false;
#endif
}

std::string gemmEngine() {
    const bool onednn = fp32ThroughOnednn(); // refuses a bad SHARDSCOPE_GEMM in every build
#if SHARDSCOPE_HAVE_OPENBLAS
    std::string blas = "OpenBLAS " + blasCoreName();
#else
    std::string blas = "the built-in kernel (no OpenBLAS)";
#endif
#if SHARDSCOPE_HAVE_ONEDNN
    const std::string isa = onednn::isaName();
    if (onednn) return "oneDNN " + isa + (nativeBf16Gemm() ? " (fp32 and bf16)" : " (fp32)");
    blas.append(" (fp32)");
    if (nativeBf16Gemm()) blas.append("; oneDNN ").append(isa).append(" (bf16)");
    return blas;
#else
    (void)onednn;
    return blas.append(" (fp32)");
#endif
}

#if SHARDSCOPE_HAVE_OPENBLAS

void setBlasThreads(int threads) {
    if (threads > 0) openblas_set_num_threads(threads);
}

int blasThreads() {
    return openblas_get_num_threads();
}

std::string blasCoreName() {
    const char* name = openblas_get_corename();
    return name ? name : "unknown";
}

#else

// The built-in GEMM runs on the calling thread only (deterministic by construction).
void setBlasThreads(int) {}

int blasThreads() {
    return 1;
}

std::string blasCoreName() {
    return "built-in (no OpenBLAS)";
}

#endif

#if !SHARDSCOPE_HAVE_OPENBLAS
std::string blasAdvice() {
    return "built without OpenBLAS: GEMM is the single-threaded built-in kernel; install OpenBLAS "
           "(libopenblas-dev) and reconfigure for fast CPU runs";
}
#else
std::string blasAdvice() {
    const std::string core = blasCoreName();
    const bool generic = core == "Prescott" || core == "prescott" || core == "Core2" ||
                         core == "core2" || core == "Nehalem" || core == "nehalem";
    if (!generic) return "";
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    if (__builtin_cpu_supports("avx512f"))
        return "OpenBLAS uses its generic " + core +
               " GEMM kernel on this AVX-512 CPU; set OPENBLAS_CORETYPE=SkylakeX for 3-4x faster "
               "GEMM";
    if (__builtin_cpu_supports("avx2"))
        return "OpenBLAS uses its generic " + core +
               " GEMM kernel on this AVX2 CPU; set OPENBLAS_CORETYPE=Haswell for faster GEMM";
#endif
    return "";
}
#endif

} // namespace shardscope::kernels
