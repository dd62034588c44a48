#include "offload/host_adamw.h"

#include <algorithm>
#include <cmath>
#include <thread>
#include <vector>

namespace shardscope::offload {

namespace {

inline float gradAt(const void* g, bool bf16, std::uint64_t i) {
    return bf16 ? toFloat(static_cast<const Bf16*>(g)[i]) : static_cast<const float*>(g)[i];
}

// The one element update (core/numeric.h: adamwElement), per dtype so the compiler vectorises
// each loop (no branch inside).
template <class G, class ToFloat>
void update(const AdamWScalars& s, float* __restrict p, const G* __restrict g, float* __restrict m,
            float* __restrict v, std::uint64_t n, ToFloat toF) {
    for (std::uint64_t i = 0; i < n; ++i)
        adamwElement(s, toF(g[i]), p[i], m[i], v[i]);
}

void updateRange(const AdamWScalars& s, float* p, const void* g, bool bf16, float* m, float* v,
                 std::uint64_t begin, std::uint64_t end) {
    const std::uint64_t n = end - begin;
    if (bf16)
        update(s, p + begin, static_cast<const Bf16*>(g) + begin, m + begin, v + begin, n,
               [](Bf16 x) { return toFloat(x); });
    else
        update(s, p + begin, static_cast<const float*>(g) + begin, m + begin, v + begin, n,
               [](float x) { return x; });
}

} // namespace

int hostThreads(std::uint64_t n, int maxThreads) {
    const int hw = std::max(1u, std::thread::hardware_concurrency());
    const int cap = maxThreads > 0 ? std::min(maxThreads, hw) : hw;
    const std::uint64_t byWork = std::max<std::uint64_t>(1, n / kMinElementsPerThread);
    return static_cast<int>(std::min<std::uint64_t>(static_cast<std::uint64_t>(cap), byWork));
}

void hostAdamW(const AdamWScalars& s, float* params, const void* grads, bool gradsBf16, float* m,
               float* v, std::uint64_t n, int threads) {
    if (n == 0) return;
    const int t = threads > 0 ? threads : hostThreads(n);
    if (t <= 1) {
        updateRange(s, params, grads, gradsBf16, m, v, 0, n);
        return;
    }
    // Chunks on 16-element boundaries (a cache line of floats): no two threads share a line.
    const std::uint64_t chunk =
        ((n + static_cast<std::uint64_t>(t) - 1) / static_cast<std::uint64_t>(t) + 15) / 16 * 16;
    std::vector<std::thread> pool;
    for (int k = 1; k < t; ++k) {
        const std::uint64_t b = std::min(n, chunk * static_cast<std::uint64_t>(k));
        const std::uint64_t e = std::min(n, b + chunk);
        if (b >= e) break;
        pool.emplace_back([&, b, e] { updateRange(s, params, grads, gradsBf16, m, v, b, e); });
    }
    updateRange(s, params, grads, gradsBf16, m, v, 0, std::min(n, chunk));
    for (std::thread& th : pool)
        th.join();
}

void hostAdamWScalar(const AdamWScalars& s, float* params, const void* grads, bool gradsBf16,
                     float* m, float* v, std::uint64_t n) {
    for (std::uint64_t i = 0; i < n; ++i)
        adamwElement(s, gradAt(grads, gradsBf16, i), params[i], m[i], v[i]);
}

void hostToBf16(const float* in, Bf16* out, std::uint64_t n) {
    for (std::uint64_t i = 0; i < n; ++i)
        out[i] = toBf16(in[i]);
}

void hostAccumulate(void* dst, const void* src, std::uint64_t n, bool bf16) {
    if (bf16) {
        auto* d = static_cast<Bf16*>(dst);
        const auto* a = static_cast<const Bf16*>(src);
        for (std::uint64_t i = 0; i < n; ++i)
            d[i] = toBf16(toFloat(d[i]) + toFloat(a[i]));
    } else {
        auto* d = static_cast<float*>(dst);
        const auto* a = static_cast<const float*>(src);
        for (std::uint64_t i = 0; i < n; ++i)
            d[i] += a[i];
    }
}

} // namespace shardscope::offload
