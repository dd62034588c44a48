#include "kernels/cpu/gemm_onednn.h"

#include "core/error.h"

#include <array>
#include <map>
#include <oneapi/dnnl/dnnl.hpp>

// One thread per rank rests on oneDNN running on OpenMP (Debian's build), whose thread count is
// set per calling thread below; oneDNN 3 changed the matmul API (kernels/cpu/CMakeLists.txt asks
// for 2.x).
#if DNNL_CPU_THREADING_RUNTIME != DNNL_RUNTIME_OMP
#error "ShardScope needs oneDNN built with the OpenMP runtime"
#endif
#include <tuple>
#include <unordered_map>

// The OpenMP runtime oneDNN runs on (Debian's libdnnl: libgomp), linked by
// kernels/cpu/CMakeLists.txt.
extern "C" void omp_set_num_threads(int threads);

namespace shardscope::kernels::onednn {

namespace {

using dnnl::memory;

dnnl::cpu_isa effectiveIsa() {
    static const dnnl::cpu_isa isa = dnnl::get_effective_cpu_isa();
    return isa;
}

// What one matmul call is made of: the primitive depends on all of it.
using Key = std::tuple<bool, bool, std::int64_t, std::int64_t, std::int64_t, std::int64_t,
                       std::int64_t, std::int64_t, float, float, bool>;

// The primitive and its three memory objects, made once per shape: a call only points them at
// its operands (set_data_handle), since making a memory object costs about as much as a small
// attention block's GEMM.
struct Prepared {
    dnnl::matmul primitive;
    memory a, b, c;
    std::unordered_map<int, memory> args; // the same three objects (handles), by argument
};

// Per thread: a rank's thread keeps its own engine, stream and primitives (oneDNN objects are
// not shared between the ranks' threads), and runs oneDNN on itself alone.
struct ThreadState {
    dnnl::engine engine{dnnl::engine::kind::cpu, 0};
    dnnl::stream stream{engine};
    std::map<Key, Prepared> cache;
    ThreadState() { omp_set_num_threads(1); }
};

ThreadState& state() {
    thread_local ThreadState s;
    return s;
}

// A row-major operand op(X) of rows × cols stored with leading dimension ld (transposed: the
// storage is cols × rows).
memory::desc operand(std::int64_t rows, std::int64_t cols, std::int64_t ld, bool trans,
                     memory::data_type type) {
    return memory::desc({rows, cols}, type, trans ? memory::dims{1, ld} : memory::dims{ld, 1});
}

// Bounded: a run has a few dozen shapes (units × their GEMMs, attention's row blocks).
constexpr std::size_t kMaxCached = 4096;

// One matmul through the thread's cached primitive (oneDNN throws dnnl::error; run() wraps it).
void execute(bool transA, bool transB, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
             const void* a, std::int64_t lda, const void* b, std::int64_t ldb, float beta, float* c,
             std::int64_t ldc, bool bf16) {
    ThreadState& s = state();
    const Key key{transA, transB, m, n, k, lda, ldb, ldc, alpha, beta, bf16};
    auto it = s.cache.find(key);
    if (it == s.cache.end()) {
        if (s.cache.size() >= kMaxCached) s.cache.clear();
        const auto type = bf16 ? memory::data_type::bf16 : memory::data_type::f32;
        Prepared p;
        const memory::desc ad = operand(m, k, lda, transA, type);
        const memory::desc bd = operand(k, n, ldb, transB, type);
        const memory::desc cd({m, n}, memory::data_type::f32, memory::dims{ldc, 1});
        dnnl::primitive_attr attr;
        if (alpha != 1.0f) attr.set_output_scales(0, {alpha});
        if (beta != 0.0f) {
            dnnl::post_ops post;
            post.append_sum(beta);
            attr.set_post_ops(post);
        }
        p.primitive = dnnl::matmul(
            dnnl::matmul::primitive_desc(dnnl::matmul::desc(ad, bd, cd), attr, s.engine));
        p.a = memory(ad, s.engine, DNNL_MEMORY_NONE);
        p.b = memory(bd, s.engine, DNNL_MEMORY_NONE);
        p.c = memory(cd, s.engine, DNNL_MEMORY_NONE);
        p.args = {{DNNL_ARG_SRC, p.a}, {DNNL_ARG_WEIGHTS, p.b}, {DNNL_ARG_DST, p.c}};
        it = s.cache.emplace(key, std::move(p)).first;
    }
    Prepared& p = it->second;
    p.a.set_data_handle(const_cast<void*>(a));
    p.b.set_data_handle(const_cast<void*>(b));
    p.c.set_data_handle(c);
    p.primitive.execute(s.stream, p.args);
    s.stream.wait();
}

void run(bool transA, bool transB, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
         const void* a, std::int64_t lda, const void* b, std::int64_t ldb, float beta, float* c,
         std::int64_t ldc, bool bf16) {
    if (m <= 0 || n <= 0) return;
    if (k <= 0) { // no products: C = beta·C (BLAS semantics, beta = 0 overwrites NaNs)
        for (std::int64_t i = 0; i < m; ++i)
            for (std::int64_t j = 0; j < n; ++j)
                c[i * ldc + j] = beta == 0.0f ? 0.0f : beta * c[i * ldc + j];
        return;
    }
    try {
        execute(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, bf16);
    } catch (const dnnl::error& e) {
        throw Error(ErrorKind::Internal, std::string("oneDNN matmul: ") + e.what());
    }
}

} // namespace

std::string isaName() {
    switch (effectiveIsa()) {
    case dnnl::cpu_isa::sse41:
        return "sse41";
    case dnnl::cpu_isa::avx:
        return "avx";
    case dnnl::cpu_isa::avx2:
        return "avx2";
    case dnnl::cpu_isa::avx2_vnni:
        return "avx2_vnni";
    case dnnl::cpu_isa::avx512_core:
        return "avx512_core";
    case dnnl::cpu_isa::avx512_core_vnni:
        return "avx512_core_vnni";
    case dnnl::cpu_isa::avx512_core_bf16:
        return "avx512_core_bf16";
    case dnnl::cpu_isa::avx512_core_amx:
        return "avx512_core_amx";
    default:
        return "other";
    }
}

bool reachesAvx512() {
    const dnnl::cpu_isa isa = effectiveIsa();
    return isa == dnnl::cpu_isa::avx512_core || isa == dnnl::cpu_isa::avx512_core_vnni ||
           isa == dnnl::cpu_isa::avx512_core_bf16 || isa == dnnl::cpu_isa::avx512_core_amx;
}

bool hasNativeBf16() {
    const dnnl::cpu_isa isa = effectiveIsa();
    return isa == dnnl::cpu_isa::avx512_core_bf16 || isa == dnnl::cpu_isa::avx512_core_amx;
}

void gemm(bool transA, bool transB, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
          const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c,
          std::int64_t ldc) {
    run(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, false);
}

void gemmBf16(bool transA, bool transB, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
              const Bf16* a, std::int64_t lda, const Bf16* b, std::int64_t ldb, float beta,
              float* c, std::int64_t ldc) {
    run(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, true);
}

} // namespace shardscope::kernels::onednn
