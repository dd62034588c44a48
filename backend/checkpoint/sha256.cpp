#include "checkpoint/sha256.h"

#include <cstring>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#include <immintrin.h>
#define SHARDSCOPE_SHA_NI 1
#endif

namespace shardscope::checkpoint {
namespace {

constexpr std::array<std::uint32_t, 64> kK = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

constexpr std::uint32_t rotr(std::uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

void portableBlock(std::array<std::uint32_t, 8>& h_, const std::uint8_t* p) {
    std::array<std::uint32_t, 64> w{};
    for (int i = 0; i < 16; ++i)
        w[static_cast<std::size_t>(i)] = (std::uint32_t{p[4 * i]} << 24) | (std::uint32_t{p[4 * i + 1]} << 16) |
                                         (std::uint32_t{p[4 * i + 2]} << 8) | std::uint32_t{p[4 * i + 3]};
    for (std::size_t i = 16; i < 64; ++i) {
        const std::uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
        const std::uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    std::uint32_t a = h_[0], b = h_[1], c = h_[2], d = h_[3], e = h_[4], f = h_[5], g = h_[6], h = h_[7];
    for (std::size_t i = 0; i < 64; ++i) {
        const std::uint32_t s1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
        const std::uint32_t ch = (e & f) ^ (~e & g);
        const std::uint32_t t1 = h + s1 + ch + kK[i] + w[i];
        const std::uint32_t s0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
        const std::uint32_t maj = (a & b) ^ (a & c) ^ (b & c);
        const std::uint32_t t2 = s0 + maj;
        h = g;
        g = f;
        f = e;
        e = d + t1;
        d = c;
        c = b;
        b = a;
        a = t1 + t2;
    }
    h_[0] += a; h_[1] += b; h_[2] += c; h_[3] += d;
    h_[4] += e; h_[5] += f; h_[6] += g; h_[7] += h;
}

#ifdef SHARDSCOPE_SHA_NI
#define SHARDSCOPE_SHA_TARGET __attribute__((target("sha,sse4.1,ssse3")))

// The SHA-NI compression of `count` blocks of each of N independent messages (Intel's SHA
// extensions: two rounds per sha256rnds2, the message schedule by sha256msg1/msg2), the N
// streams interleaved instruction by instruction: one stream is bound by sha256rnds2's latency,
// two fill the gaps (1.3–1.6× the throughput of one per core on the development machine; three
// streams gain nothing more, the 16 xmm registers spill). The state is kept as ABEF / CDGH.
template <int N>
SHARDSCOPE_SHA_TARGET void shaNiBlocks(std::array<std::uint32_t, 8>* const* h, const std::uint8_t* const* src,
                                       std::size_t count) {
    const __m128i mask = _mm_set_epi64x(0x0c0d0e0f08090a0bLL, 0x0405060700010203LL);
    __m128i state0[N], state1[N];
    for (int s = 0; s < N; ++s) {
        __m128i tmp = _mm_loadu_si128(reinterpret_cast<const __m128i*>(&(*h[s])[0]));
        state1[s] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(&(*h[s])[4]));
        tmp = _mm_shuffle_epi32(tmp, 0xB1);                // CDAB
        state1[s] = _mm_shuffle_epi32(state1[s], 0x1B);    // EFGH
        state0[s] = _mm_alignr_epi8(tmp, state1[s], 8);    // ABEF
        state1[s] = _mm_blend_epi16(state1[s], tmp, 0xF0); // CDGH
    }
    for (std::size_t b = 0; b < count; ++b) {
        __m128i abef[N], cdgh[N], w[N][4];
        for (int s = 0; s < N; ++s) {
            abef[s] = state0[s];
            cdgh[s] = state1[s];
        }
#pragma GCC unroll 16
        for (int i = 0; i < 16; ++i) {
            const __m128i k = _mm_loadu_si128(reinterpret_cast<const __m128i*>(&kK[static_cast<std::size_t>(4 * i)]));
#pragma GCC unroll 2
            for (int s = 0; s < N; ++s) {
                __m128i& cur = w[s][i % 4];
                if (i < 4)
                    cur = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src[s] + 64 * b + 16 * i)), mask);
                __m128i msg = _mm_add_epi32(cur, k);
                state1[s] = _mm_sha256rnds2_epu32(state1[s], state0[s], msg);
                if (i >= 3 && i <= 14) {
                    __m128i& next = w[s][(i + 1) % 4];
                    next = _mm_add_epi32(next, _mm_alignr_epi8(cur, w[s][(i + 3) % 4], 4));
                    next = _mm_sha256msg2_epu32(next, cur);
                }
                msg = _mm_shuffle_epi32(msg, 0x0E);
                state0[s] = _mm_sha256rnds2_epu32(state0[s], state1[s], msg);
                if (i >= 1 && i <= 12) w[s][(i + 3) % 4] = _mm_sha256msg1_epu32(w[s][(i + 3) % 4], cur);
            }
        }
        for (int s = 0; s < N; ++s) {
            state0[s] = _mm_add_epi32(state0[s], abef[s]);
            state1[s] = _mm_add_epi32(state1[s], cdgh[s]);
        }
    }
    for (int s = 0; s < N; ++s) {
        const __m128i tmp = _mm_shuffle_epi32(state0[s], 0x1B); // FEBA
        state1[s] = _mm_shuffle_epi32(state1[s], 0xB1);         // DCHG
        state0[s] = _mm_blend_epi16(tmp, state1[s], 0xF0);      // DCBA
        state1[s] = _mm_alignr_epi8(state1[s], tmp, 8);         // ABEF
        _mm_storeu_si128(reinterpret_cast<__m128i*>(&(*h[s])[0]), state0[s]);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(&(*h[s])[4]), state1[s]);
    }
}
#endif

} // namespace

bool sha256Accelerated() {
#ifdef SHARDSCOPE_SHA_NI
    // CPUID: leaf 7 EBX bit 29 is SHA; leaf 1 ECX bits 19 and 9 are SSE4.1 and SSSE3.
    static const bool has = [] {
        unsigned a = 0, b = 0, c = 0, d = 0;
        if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 19)) || !(c & (1u << 9))) return false;
        if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
        return (b & (1u << 29)) != 0;
    }();
    return has;
#else
    return false;
#endif
}

Sha256::Sha256(bool portable)
    : h_{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19},
      accelerated_(!portable && sha256Accelerated()) {}

void Sha256::blocks(const std::uint8_t* p, std::size_t count) {
#ifdef SHARDSCOPE_SHA_NI
    if (accelerated_) {
        std::array<std::uint32_t, 8>* h[1] = {&h_};
        shaNiBlocks<1>(h, &p, count);
        return;
    }
#endif
    for (; count > 0; --count, p += 64) portableBlock(h_, p);
}

void Sha256::update(const void* data, std::size_t bytes) {
    const auto* p = static_cast<const std::uint8_t*>(data);
    total_ += bytes;
    if (used_ > 0) {
        const std::size_t take = std::min(bytes, buf_.size() - used_);
        std::memcpy(buf_.data() + used_, p, take);
        used_ += take;
        p += take;
        bytes -= take;
        if (used_ < buf_.size()) return;
        blocks(buf_.data(), 1);
        used_ = 0;
    }
    blocks(p, bytes / 64);
    p += bytes / 64 * 64;
    bytes %= 64;
    if (bytes > 0) std::memcpy(buf_.data(), p, bytes);
    used_ = bytes;
}

std::string Sha256::hex() {
    const std::uint64_t bits = total_ * 8;
    const std::uint8_t one = 0x80;
    const std::uint8_t zero = 0;
    const std::uint64_t keep = total_;
    update(&one, 1);
    while (used_ != 56) update(&zero, 1);
    std::uint8_t len[8];
    for (int i = 0; i < 8; ++i) len[i] = static_cast<std::uint8_t>(bits >> (56 - 8 * i));
    update(len, 8);
    total_ = keep;
    static const char* digits = "0123456789abcdef";
    std::string out;
    out.reserve(64);
    for (std::uint32_t v : h_)
        for (int s = 28; s >= 0; s -= 4) out.push_back(digits[(v >> s) & 0xf]);
    return out;
}

namespace {

// A read position in a message given as pieces; empty pieces are skipped.
struct Cursor {
    std::span<const std::string_view> pieces;
    std::size_t piece = 0, at = 0;
    void skipEmpty() {
        while (piece < pieces.size() && at == pieces[piece].size()) {
            ++piece;
            at = 0;
        }
    }
    bool done() {
        skipEmpty();
        return piece == pieces.size();
    }
    const std::uint8_t* data() const { return reinterpret_cast<const std::uint8_t*>(pieces[piece].data()) + at; }
    std::size_t left() const { return pieces[piece].size() - at; }
    // Feeds the next `n` bytes (n <= left()) to `sha`.
    void feed(Sha256& sha, std::size_t n) {
        sha.update(data(), n);
        at += n;
    }
};

} // namespace

std::array<std::string, 2> Sha256::hexPair(std::span<const std::string_view> a, std::span<const std::string_view> b,
                                           bool portable) {
    Sha256 x(portable), y(portable);
    Cursor ca{a}, cb{b};
    while (x.accelerated_ && !ca.done() && !cb.done()) {
        // Both must stand at a block boundary of their own message before blocks interleave.
        if (x.used_ > 0) {
            ca.feed(x, std::min(ca.left(), x.buf_.size() - x.used_));
            continue;
        }
        if (y.used_ > 0) {
            cb.feed(y, std::min(cb.left(), y.buf_.size() - y.used_));
            continue;
        }
        const std::size_t n = std::min(ca.left(), cb.left()) / 64;
        if (n == 0) { // a piece's tail shorter than a block: into its hasher's buffer
            if (ca.left() < 64) ca.feed(x, ca.left());
            else cb.feed(y, cb.left());
            continue;
        }
#ifdef SHARDSCOPE_SHA_NI
        std::array<std::uint32_t, 8>* h[2] = {&x.h_, &y.h_};
        const std::uint8_t* p[2] = {ca.data(), cb.data()};
        shaNiBlocks<2>(h, p, n);
#endif
        x.total_ += n * 64;
        y.total_ += n * 64;
        ca.at += n * 64;
        cb.at += n * 64;
    }
    while (!ca.done()) ca.feed(x, ca.left());
    while (!cb.done()) cb.feed(y, cb.left());
    return {x.hex(), y.hex()};
}

std::string sha256Hex(std::string_view bytes) {
    Sha256 s;
    s.update(bytes);
    return s.hex();
}

} // namespace shardscope::checkpoint
