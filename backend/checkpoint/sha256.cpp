#include "checkpoint/sha256.h"

#include <new>
#include <openssl/evp.h>
#include <stdexcept>

namespace shardscope::checkpoint {

namespace {
// A failure here is OpenSSL out of memory or a broken libcrypto, never bad input.
[[noreturn]] void fail(const char* what) {
    throw std::runtime_error(std::string("sha256: ") + what + " failed");
}
} // namespace

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
    if (ctx_ == nullptr) throw std::bad_alloc();
    if (EVP_DigestInit_ex(ctx_, EVP_sha256(), nullptr) != 1) {
        EVP_MD_CTX_free(ctx_);
        fail("EVP_DigestInit_ex");
    }
}

Sha256::~Sha256() {
    EVP_MD_CTX_free(ctx_);
}

void Sha256::update(const void* data, std::size_t bytes) {
    if (bytes > 0 && EVP_DigestUpdate(ctx_, data, bytes) != 1) fail("EVP_DigestUpdate");
}

std::string Sha256::hex() {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    if (EVP_DigestFinal_ex(ctx_, digest, &length) != 1 || length != 32) fail("EVP_DigestFinal_ex");
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out(64, '0');
    for (unsigned i = 0; i < 32; ++i) {
        out[2 * i] = kHex[digest[i] >> 4];
        out[2 * i + 1] = kHex[digest[i] & 15];
    }
    return out;
}

std::string sha256Hex(std::string_view bytes) {
    Sha256 s;
    s.update(bytes);
    return s.hex();
}

} // namespace shardscope::checkpoint
