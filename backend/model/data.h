#pragma once
// Training data: a deterministic synthetic language (a random sparse Markov chain) or the
// bytes of any file (vocab 256).
//
// Note: sequence g of step s depends only on (seed, s, g). The global batch of a step is
// sequences [0, microBatch·worldSize) and rank r takes [r·microBatch, (r+1)·microBatch), so
// the global batch — and therefore the math of a step — is the same for any rank count with
// the same global batch size.
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

namespace shardscope::model {

struct Batch {
    std::int64_t sequences = 0;
    std::int64_t seqLen = 0;
    std::vector<std::int32_t> inputs;  // [sequences × seqLen]
    std::vector<std::int32_t> targets; // inputs shifted left by one token
};

class DataSource {
public:
    DataSource(std::int64_t seqLen, std::int64_t microBatch, std::uint64_t seed);
    virtual ~DataSource() = default;

    virtual std::int64_t vocab() const = 0;
    virtual std::string describe() const = 0;

    std::int64_t seqLen() const { return seqLen_; }
    std::int64_t microBatch() const { return microBatch_; }
    std::uint64_t seed() const { return seed_; }

    // This rank's slice of step `step`'s global batch; throws Error(InvalidArgument) for a rank
    // outside [0, worldSize).
    Batch batchFor(std::int64_t step, int rank, int worldSize) const;

protected:
    // Fills seqLen + 1 tokens of sequence `globalIndex` of step `step`.
    virtual void fillSequence(std::int64_t step, std::int64_t globalIndex,
                              std::span<std::int32_t> tokens) const = 0;

private:
    std::int64_t seqLen_;
    std::int64_t microBatch_;
    std::uint64_t seed_;
};

// A first-order Markov chain where each token has `branching` possible successors with random
// probabilities: learnable structure whose best achievable loss (the chain's entropy rate) is
// far below ln(vocab).
class MarkovSource final : public DataSource {
public:
    MarkovSource(std::int64_t vocab, std::int64_t seqLen, std::int64_t microBatch,
                 std::uint64_t seed, int branching = 3);
    std::int64_t vocab() const override { return vocab_; }
    std::string describe() const override;
    // Entropy rate in nats under the stationary distribution: the loss a perfect model reaches.
    double entropyRateNats() const;

protected:
    void fillSequence(std::int64_t step, std::int64_t globalIndex,
                      std::span<std::int32_t> tokens) const override;

private:
    std::int64_t vocab_;
    int branching_;
    std::vector<std::int32_t> successors_; // [vocab × branching]
    std::vector<double> cumulative_;       // [vocab × branching], rows end at 1
};

// Byte-level language modelling on a file: each sequence starts at a seeded random offset.
//
// Note: the file is never read whole. Each sequence's seqLen + 1 bytes are read at its offset
// (pread), so memory does not grow with the file; only regular files of at most
// kMaxDataFileBytes (core/user_files.h) are accepted, and a FIFO or device is refused at once
// rather than read forever.
class ByteFileSource final : public DataSource {
public:
    // Throws Error(Io) if the file cannot be opened, Error(InvalidArgument) if it is a directory
    // or special file, shorter than seqLen + 1 bytes or larger than the cap; Error(Io) later from
    // batchFor when the file shrank under a running job.
    ByteFileSource(const std::filesystem::path& path, std::int64_t seqLen, std::int64_t microBatch,
                   std::uint64_t seed);
    ~ByteFileSource() override;
    ByteFileSource(const ByteFileSource&) = delete;
    ByteFileSource& operator=(const ByteFileSource&) = delete;
    std::int64_t vocab() const override { return 256; }
    std::string describe() const override;

protected:
    void fillSequence(std::int64_t step, std::int64_t globalIndex,
                      std::span<std::int32_t> tokens) const override;

private:
    std::string path_;
    int fd_ = -1;
    std::uint64_t size_ = 0;
};

} // namespace shardscope::model
