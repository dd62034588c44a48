#pragma once
// SHA-256 (FIPS 180-4), incremental: the checksum of every checkpoint data file and chunk.
// OpenSSL's libcrypto computes it (the EVP digest): the audited implementation, which picks the
// CPU's fastest path (SHA extensions, AVX2, …) at run time. The format's hashes are plain
// SHA-256, so every checkpoint written earlier still verifies.
#include <cstddef>
#include <string>
#include <string_view>

struct evp_md_ctx_st; // OpenSSL's EVP_MD_CTX, kept out of every includer

namespace shardscope::checkpoint {

class Sha256 {
public:
    Sha256();
    ~Sha256();
    Sha256(const Sha256&) = delete;
    Sha256& operator=(const Sha256&) = delete;
    void update(const void* data, std::size_t bytes);
    void update(std::string_view bytes) { update(bytes.data(), bytes.size()); }
    // The digest as 64 lowercase hex digits; the object is spent afterwards.
    std::string hex();

private:
    evp_md_ctx_st* ctx_;
};

std::string sha256Hex(std::string_view bytes);

} // namespace shardscope::checkpoint
