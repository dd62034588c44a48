// Synthetic Markov data and byte-level file data: determinism and rank slicing.
#include "core/error.h"
#include "model/data.h"

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <set>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

namespace shardscope {
namespace {

TEST(modelData, TargetsAreInputsShiftedByOne) {
    model::MarkovSource data(89, 32, 3, 1);
    const model::Batch b = data.batchFor(0, 0, 1);
    ASSERT_EQ(b.inputs.size(), 96u);
    for (std::int64_t s = 0; s < 3; ++s)
        for (std::int64_t i = 0; i + 1 < 32; ++i)
            EXPECT_EQ(b.targets[static_cast<std::size_t>(s * 32 + i)],
                      b.inputs[static_cast<std::size_t>(s * 32 + i + 1)]);
    for (std::int32_t t : b.inputs) {
        EXPECT_GE(t, 0);
        EXPECT_LT(t, 89);
    }
}

TEST(modelData, SameSeedSameBatchesAndGlobalBatchIndependentOfRankCount) {
    model::MarkovSource one(89, 16, 4, 7), again(89, 16, 4, 7), other(89, 16, 4, 8);
    EXPECT_EQ(one.batchFor(5, 0, 1).inputs, again.batchFor(5, 0, 1).inputs);
    EXPECT_NE(one.batchFor(5, 0, 1).inputs, other.batchFor(5, 0, 1).inputs);
    EXPECT_NE(one.batchFor(5, 0, 1).inputs, one.batchFor(6, 0, 1).inputs);
    // A global batch of 4 sequences: 1 rank × 4 == 2 ranks × 2 == 4 ranks × 1.
    const auto global = one.batchFor(5, 0, 1).inputs;
    model::MarkovSource halves(89, 16, 2, 7), quarters(89, 16, 1, 7);
    std::vector<std::int32_t> two, four;
    for (int r = 0; r < 2; ++r) {
        const auto part = halves.batchFor(5, r, 2).inputs;
        two.insert(two.end(), part.begin(), part.end());
    }
    for (int r = 0; r < 4; ++r) {
        const auto part = quarters.batchFor(5, r, 4).inputs;
        four.insert(four.end(), part.begin(), part.end());
    }
    EXPECT_EQ(two, global);
    EXPECT_EQ(four, global);
    EXPECT_THROW(one.batchFor(0, 2, 2), std::exception);
}

TEST(modelData, MarkovChainIsLearnableStructure) {
    model::MarkovSource data(89, 32, 4, 1);
    const double rate = data.entropyRateNats();
    EXPECT_GT(rate, 0.1);
    EXPECT_LT(rate, std::log(3.0) + 1e-9) << "three successors per token bound the entropy";
    EXPECT_LT(rate, 0.5 * std::log(89.0));
    // Empirically, each token is followed by at most 3 distinct tokens.
    std::vector<std::set<std::int32_t>> followers(89);
    for (int step = 0; step < 20; ++step) {
        const auto b = data.batchFor(step, 0, 1);
        for (std::size_t i = 0; i < b.inputs.size(); ++i)
            followers[static_cast<std::size_t>(b.inputs[i])].insert(b.targets[i]);
    }
    for (const auto& f : followers)
        EXPECT_LE(f.size(), 3u);
}

TEST(modelData, ByteFileSourceReadsWindowsOfTheFile) {
    const auto path = std::filesystem::temp_directory_path() /
                      ("shardscope_model_data_test_" + std::to_string(::getpid()) + ".txt");
    std::string text;
    for (int i = 0; i < 50; ++i)
        text += "the quick brown fox " + std::to_string(i) + "\n";
    std::ofstream(path, std::ios::binary) << text;
    model::ByteFileSource data(path, 16, 2, 3);
    EXPECT_EQ(data.vocab(), 256);
    const auto b = data.batchFor(0, 0, 1);
    for (std::int64_t s = 0; s < 2; ++s) {
        std::string window;
        for (std::int64_t i = 0; i < 16; ++i)
            window += static_cast<char>(b.inputs[static_cast<std::size_t>(s * 16 + i)]);
        EXPECT_NE(text.find(window), std::string::npos) << "a contiguous window of the file";
    }
    EXPECT_EQ(b.inputs, model::ByteFileSource(path, 16, 2, 3).batchFor(0, 0, 1).inputs);
    std::ofstream(path, std::ios::binary | std::ios::trunc) << "short";
    EXPECT_THROW(model::ByteFileSource(path, 16, 2, 3), std::exception);
    std::filesystem::remove(path);
    EXPECT_THROW(model::ByteFileSource(path, 16, 2, 3), std::exception);
    EXPECT_THROW(model::ByteFileSource(std::filesystem::temp_directory_path(), 16, 2, 3),
                 std::exception);
}

// The file is read window by window (never whole), only when it is a regular file: a FIFO is
// refused without waiting for a writer, a device without reading it, and a file that shrinks
// under a running job is an error, not a crash.
TEST(modelData, ByteFileSourceTakesRegularFilesOnlyAndReadsWindows) {
    const auto dir = std::filesystem::temp_directory_path() /
                     ("shardscope_model_data_fifo_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    const auto fifo = dir / "fifo";
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    const auto start = std::chrono::steady_clock::now();
    EXPECT_THROW(model::ByteFileSource(fifo, 16, 2, 3), Error);
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
    EXPECT_THROW(model::ByteFileSource("/dev/zero", 16, 2, 3), Error);
    std::ofstream(dir / "empty");
    try {
        model::ByteFileSource(dir / "empty", 16, 2, 3);
        ADD_FAILURE() << "an empty file is refused";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::InvalidArgument);
        EXPECT_NE(std::string(e.what()).find("has 0 bytes; at least 17"), std::string::npos)
            << e.what();
    }
    const auto text = dir / "text";
    std::ofstream(text, std::ios::binary) << std::string(4096, 'x');
    model::ByteFileSource data(text, 16, 2, 3);
    EXPECT_NE(data.describe().find("4096 bytes"), std::string::npos);
    EXPECT_EQ(data.batchFor(0, 0, 1).inputs, std::vector<std::int32_t>(32, 'x'));
    std::filesystem::resize_file(text, 8); // shorter than a window
    EXPECT_THROW(data.batchFor(1, 0, 1), Error);
    std::filesystem::remove_all(dir);
}

} // namespace
} // namespace shardscope
