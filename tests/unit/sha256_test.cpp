// sha256 of the checkpoint library: the FIPS 180-4 vectors on every path (the SHA extensions
// where the CPU has them, and the portable code forced), the paths against each other on random
// lengths and multi-MiB inputs, and the paired hashing against single messages.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "checkpoint/sha256.h"

namespace shardscope::checkpoint {
namespace {

std::string randomBytes(std::size_t n, std::uint32_t seed) {
    std::mt19937 rng(seed);
    std::string s(n, '\0');
    for (char& c : s) c = static_cast<char>(rng() >> 24);
    return s;
}

std::string hexOf(std::string_view bytes, bool portable) {
    Sha256 s(portable);
    s.update(bytes);
    return s.hex();
}

TEST(checkpointSha256, MatchesTheFipsVectors) {
    for (const bool portable : {false, true}) {
        SCOPED_TRACE(portable ? "portable" : "default path");
        EXPECT_EQ(hexOf("", portable), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
        EXPECT_EQ(hexOf("abc", portable), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        EXPECT_EQ(hexOf("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", portable),
                  "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
        EXPECT_EQ(hexOf("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopq"
                        "rsmnopqrstnopqrstu",
                        portable),
                  "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
        Sha256 million(portable); // one million 'a', fed in uneven pieces across block boundaries
        const std::string piece(997, 'a');
        std::size_t left = 1000000;
        while (left > 0) {
            const std::size_t n = std::min(left, piece.size());
            million.update(piece.data(), n);
            left -= n;
        }
        EXPECT_EQ(million.hex(), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
        const std::array<std::string_view, 3> abc = {"a", "", "bc"}, empty = {};
        const auto pair = Sha256::hexPair(abc, empty, portable);
        EXPECT_EQ(pair[0], "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        EXPECT_EQ(pair[1], "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    }
}

TEST(checkpointSha256, TheAcceleratedPathEqualsThePortableOne) {
    const std::string bytes = randomBytes(std::size_t{5} << 20, 12345);
    std::mt19937 rng(7);
    std::vector<std::size_t> lengths = {0, 55, 56, 63, 64, 65, 119, 120, 128, 65537, std::size_t{1} << 20, bytes.size()};
    for (int i = 0; i < 200; ++i) lengths.push_back(rng() % (10 * 1024 + 1));
    for (const std::size_t n : lengths) {
        const std::size_t from = rng() % 61; // unaligned starts too
        const std::string_view in(bytes.data() + from, std::min(n, bytes.size() - from));
        Sha256 fast, slow(true), split;
        fast.update(in);
        slow.update(in);
        const std::size_t cut = in.empty() ? 0 : rng() % in.size();
        split.update(in.substr(0, cut));
        split.update(in.substr(cut));
        const std::string want = slow.hex();
        EXPECT_EQ(fast.hex(), want) << n;
        EXPECT_EQ(split.hex(), want) << n << " cut at " << cut;
    }
    if (!sha256Accelerated()) GTEST_SKIP() << "no SHA extensions on this CPU: only the portable path ran";
}

// Two messages in pieces of random sizes (empty, shorter than a block, unaligned, long) give
// the digests of each alone, on both paths.
TEST(checkpointSha256, PairedHashingEqualsEachMessageAlone) {
    const std::string bytes = randomBytes(std::size_t{3} << 20, 99);
    std::mt19937 rng(3);
    auto piecesOf = [&](std::size_t total, int maxPieces) {
        std::vector<std::string_view> out;
        std::size_t at = rng() % 100;
        const int count = 1 + static_cast<int>(rng() % static_cast<unsigned>(maxPieces));
        for (int p = 0; p < count && at < bytes.size(); ++p) {
            std::size_t n = p + 1 == count ? total : rng() % (total + 1);
            if (rng() % 4 == 0) n = rng() % 70;
            n = std::min({n, total, bytes.size() - at});
            out.emplace_back(bytes.data() + at, n);
            total -= n;
            at += n + rng() % 3;
        }
        return out;
    };
    for (int round = 0; round < 100; ++round) {
        const std::size_t la = round < 6 ? std::size_t{1} << 20 : rng() % 20000;
        const std::size_t lb = round % 3 == 0 ? la : (round < 6 ? (std::size_t{1} << 18) + 13 : rng() % 20000);
        const std::vector<std::string_view> a = piecesOf(la, 4), b = piecesOf(lb, 4);
        std::string joinedA, joinedB;
        for (const std::string_view p : a) joinedA += p;
        for (const std::string_view p : b) joinedB += p;
        const std::string wantA = hexOf(joinedA, true), wantB = hexOf(joinedB, true);
        for (const bool portable : {false, true}) {
            const auto pair = Sha256::hexPair(a, b, portable);
            EXPECT_EQ(pair[0], wantA) << round;
            EXPECT_EQ(pair[1], wantB) << round;
        }
    }
}

} // namespace
} // namespace shardscope::checkpoint
