#pragma once
// A small, portable, seedable generator (splitmix64). std::mt19937 is portable but the
// standard distributions are not, and runs must be bit-identical on every platform/compiler.
#include <cmath>
#include <cstdint>
#include <numbers>

namespace shardscope::model {

constexpr std::uint64_t splitmix64(std::uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

// Derives an independent stream from a seed and two coordinates (e.g. step, sequence index).
constexpr std::uint64_t mixSeed(std::uint64_t seed, std::uint64_t a, std::uint64_t b) {
    return splitmix64(splitmix64(splitmix64(seed) ^ a) ^ b);
}

class Rng {
public:
    explicit Rng(std::uint64_t seed) : state_(seed) {}
    std::uint64_t next() {
        state_ += 0x9e3779b97f4a7c15ull;
        std::uint64_t z = state_;
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    // Uniform in [0, 1) with 53 random bits.
    double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
    // Uniform integer in [0, n); the modulo bias is < n/2^64, irrelevant here.
    std::uint64_t below(std::uint64_t n) { return next() % n; }
    // Standard normal (Box–Muller; one value per call keeps the stream simple to reason about).
    double normal() {
        const double u1 = 1.0 - uniform(); // (0, 1]: log is finite
        const double u2 = uniform();
        return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
    }

private:
    std::uint64_t state_;
};

} // namespace shardscope::model
