#pragma once
// SHA-256 (FIPS 180-4), incremental: the checksum of every checkpoint data file. Small and
// dependency-free on purpose; tested against the FIPS/NIST vectors.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace shardscope::checkpoint {

class Sha256 {
public:
    Sha256();
    void update(const void* data, std::size_t bytes);
    void update(std::string_view bytes) { update(bytes.data(), bytes.size()); }
    // The digest as 64 lowercase hex digits; the object is spent afterwards.
    std::string hex();

private:
    void block(const std::uint8_t* p);
    std::array<std::uint32_t, 8> h_;
    std::array<std::uint8_t, 64> buf_{};
    std::size_t used_ = 0;
    std::uint64_t total_ = 0; // bytes
};

std::string sha256Hex(std::string_view bytes);

} // namespace shardscope::checkpoint
