// sha256 of the checkpoint library (OpenSSL's EVP digest underneath): the FIPS 180-4 vectors,
// a message fed in any split equals it fed whole, and a spent-then-new object starts afresh.
#include "checkpoint/sha256.h"

#include <algorithm>
#include <cstdint>
#include <gtest/gtest.h>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace shardscope::checkpoint {
namespace {

std::string randomBytes(std::size_t n, std::uint32_t seed) {
    std::mt19937 rng(seed);
    std::string s(n, '\0');
    for (char& c : s)
        c = static_cast<char>(rng() >> 24);
    return s;
}

TEST(checkpointSha256, MatchesTheFipsVectors) {
    EXPECT_EQ(sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    EXPECT_EQ(sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    EXPECT_EQ(sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
              "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    EXPECT_EQ(sha256Hex("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjk"
                        "lmnopqklmnopqrlmnopq"
                        "rsmnopqrstnopqrstu"),
              "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
    Sha256 million; // one million 'a', fed in uneven pieces across block boundaries
    const std::string piece(997, 'a');
    std::size_t left = 1000000;
    while (left > 0) {
        const std::size_t n = std::min(left, piece.size());
        million.update(piece.data(), n);
        left -= n;
    }
    EXPECT_EQ(million.hex(), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

// The loader feeds a chunk in up to three pieces (staging, buffer, staging): any split of a
// message, at unaligned starts and around the 64-byte block, hashes as the message whole.
TEST(checkpointSha256, AnySplitEqualsTheWholeMessage) {
    const std::string bytes = randomBytes(std::size_t{3} << 20, 12345);
    std::mt19937 rng(7);
    std::vector<std::size_t> lengths = {
        0, 55, 56, 63, 64, 65, 119, 120, 128, 65537, std::size_t{1} << 20};
    for (int i = 0; i < 200; ++i)
        lengths.push_back(rng() % (10 * 1024 + 1));
    for (const std::size_t n : lengths) {
        const std::size_t from = rng() % 61;
        const std::string_view in(bytes.data() + from, std::min(n, bytes.size() - from));
        const std::string want = sha256Hex(in);
        const std::size_t a = in.empty() ? 0 : rng() % in.size();
        const std::size_t b = a + (in.size() == a ? 0 : rng() % (in.size() - a));
        Sha256 split;
        split.update(in.substr(0, a));
        split.update(in.substr(a, b - a));
        split.update(in.substr(b));
        EXPECT_EQ(split.hex(), want) << n << " cut at " << a << ", " << b;
    }
}

} // namespace
} // namespace shardscope::checkpoint
