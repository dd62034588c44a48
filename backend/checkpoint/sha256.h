#pragma once
// SHA-256 (FIPS 180-4), incremental: the checksum of every checkpoint data file. Small and
// dependency-free on purpose; tested against the FIPS/NIST vectors. On x86 CPUs with the SHA
// extensions the compression runs on them (≈ 5× the portable code, so hashing stays well
// below the disk's time), chosen at run time.
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace shardscope::checkpoint {

class Sha256 {
public:
    // `portable`: never the SHA-NI path (tests compare the two).
    explicit Sha256(bool portable = false);
    void update(const void* data, std::size_t bytes);
    void update(std::string_view bytes) { update(bytes.data(), bytes.size()); }
    // The digest as 64 lowercase hex digits; the object is spent afterwards.
    std::string hex();
    // The digests of two messages, each given as consecutive pieces, hashed together: with the
    // SHA extensions the blocks of both interleave (one message alone is bound by the latency of
    // the round instruction), otherwise one after the other. Equal to hashing each alone.
    static std::array<std::string, 2> hexPair(std::span<const std::string_view> a, std::span<const std::string_view> b,
                                              bool portable = false);

private:
    void blocks(const std::uint8_t* p, std::size_t count);
    std::array<std::uint32_t, 8> h_;
    bool accelerated_ = false;
    std::array<std::uint8_t, 64> buf_{};
    std::size_t used_ = 0;
    std::uint64_t total_ = 0; // bytes
};

std::string sha256Hex(std::string_view bytes);
// Whether this CPU hashes with the SHA extensions (x86 SHA-NI).
bool sha256Accelerated();

} // namespace shardscope::checkpoint
