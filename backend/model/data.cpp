#include "model/data.h"

#include <algorithm>
#include <cmath>
#include <fstream>

#include "core/error.h"
#include "model/rng.h"

namespace shardscope::model {

DataSource::DataSource(std::int64_t seqLen, std::int64_t microBatch, std::uint64_t seed)
    : seqLen_(seqLen), microBatch_(microBatch), seed_(seed) {
    if (seqLen < 1) throwInvalid("data: sequence length must be at least 1");
    if (microBatch < 1) throwInvalid("data: micro-batch must be at least 1");
}

Batch DataSource::batchFor(std::int64_t step, int rank, int worldSize) const {
    if (worldSize < 1 || rank < 0 || rank >= worldSize)
        throwInvalid("data: rank " + std::to_string(rank) + " is outside a world of " +
                     std::to_string(worldSize));
    Batch batch;
    batch.sequences = microBatch_;
    batch.seqLen = seqLen_;
    const auto tokens = static_cast<std::size_t>(microBatch_ * seqLen_);
    batch.inputs.resize(tokens);
    batch.targets.resize(tokens);
    std::vector<std::int32_t> sequence(static_cast<std::size_t>(seqLen_ + 1));
    for (std::int64_t i = 0; i < microBatch_; ++i) {
        fillSequence(step, static_cast<std::int64_t>(rank) * microBatch_ + i, sequence);
        const auto at = static_cast<std::ptrdiff_t>(i * seqLen_);
        std::copy(sequence.begin(), sequence.end() - 1, batch.inputs.begin() + at);
        std::copy(sequence.begin() + 1, sequence.end(), batch.targets.begin() + at);
    }
    return batch;
}

MarkovSource::MarkovSource(std::int64_t vocab, std::int64_t seqLen, std::int64_t microBatch,
                           std::uint64_t seed, int branching)
    : DataSource(seqLen, microBatch, seed), vocab_(vocab), branching_(branching) {
    if (vocab < 2) throwInvalid("data: vocabulary must have at least 2 tokens");
    if (branching < 1 || branching > vocab) throwInvalid("data: branching must be in [1, vocab]");
    const auto cells = static_cast<std::size_t>(vocab * branching);
    successors_.resize(cells);
    cumulative_.resize(cells);
    Rng rng(mixSeed(seed, 0x3a4b0u, 0));
    for (std::int64_t t = 0; t < vocab; ++t) {
        double total = 0.0;
        const auto row = static_cast<std::size_t>(t * branching);
        for (int k = 0; k < branching; ++k) {
            successors_[row + static_cast<std::size_t>(k)] =
                static_cast<std::int32_t>(rng.below(static_cast<std::uint64_t>(vocab)));
            // Weights in [0.2, 1.2): no successor is negligible, so the chain stays well mixed.
            total += (cumulative_[row + static_cast<std::size_t>(k)] = 0.2 + rng.uniform());
        }
        double running = 0.0;
        for (int k = 0; k < branching; ++k) {
            running += cumulative_[row + static_cast<std::size_t>(k)] / total;
            cumulative_[row + static_cast<std::size_t>(k)] = running;
        }
        cumulative_[row + static_cast<std::size_t>(branching - 1)] = 1.0;
    }
}

std::string MarkovSource::describe() const {
    return "synthetic Markov chain (vocab " + std::to_string(vocab_) + ", " +
           std::to_string(branching_) + " successors per token, seed " + std::to_string(seed()) + ")";
}

void MarkovSource::fillSequence(std::int64_t step, std::int64_t globalIndex,
                                std::span<std::int32_t> tokens) const {
    Rng rng(mixSeed(seed(), static_cast<std::uint64_t>(step), static_cast<std::uint64_t>(globalIndex)));
    std::int32_t current = static_cast<std::int32_t>(rng.below(static_cast<std::uint64_t>(vocab_)));
    for (std::int32_t& token : tokens) {
        token = current;
        const double u = rng.uniform();
        const auto row = static_cast<std::size_t>(current) * static_cast<std::size_t>(branching_);
        int k = 0;
        while (k + 1 < branching_ && u >= cumulative_[row + static_cast<std::size_t>(k)]) ++k;
        current = successors_[row + static_cast<std::size_t>(k)];
    }
}

double MarkovSource::entropyRateNats() const {
    // Stationary distribution by power iteration from uniform (the chain may be reducible; the
    // uniform start then weights classes the way uniformly-seeded sequences do, on average).
    const auto v = static_cast<std::size_t>(vocab_);
    const auto b = static_cast<std::size_t>(branching_);
    std::vector<double> pi(v, 1.0 / static_cast<double>(v)), next(v);
    std::vector<double> stateEntropy(v, 0.0);
    for (std::size_t t = 0; t < v; ++t) {
        double previous = 0.0;
        for (std::size_t k = 0; k < b; ++k) {
            const double p = cumulative_[t * b + k] - previous;
            previous = cumulative_[t * b + k];
            if (p > 0.0) stateEntropy[t] -= p * std::log(p);
        }
    }
    for (int iter = 0; iter < 200; ++iter) {
        std::fill(next.begin(), next.end(), 0.0);
        for (std::size_t t = 0; t < v; ++t) {
            double previous = 0.0;
            for (std::size_t k = 0; k < b; ++k) {
                next[static_cast<std::size_t>(successors_[t * b + k])] +=
                    pi[t] * (cumulative_[t * b + k] - previous);
                previous = cumulative_[t * b + k];
            }
        }
        pi.swap(next);
    }
    double rate = 0.0;
    for (std::size_t t = 0; t < v; ++t) rate += pi[t] * stateEntropy[t];
    return rate;
}

ByteFileSource::ByteFileSource(const std::filesystem::path& path, std::int64_t seqLen,
                               std::int64_t microBatch, std::uint64_t seed)
    : DataSource(seqLen, microBatch, seed), path_(path.string()) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
        throw Error(ErrorKind::Io, "--data: '" + path_ + "' is a directory, not a file");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error(ErrorKind::Io, "--data: cannot read '" + path_ + "'");
    // Read in chunks (istreambuf_iterator trips GCC 12's -Wnull-dereference inside libstdc++).
    char chunk[1 << 16];
    while (in.read(chunk, sizeof(chunk)) || in.gcount() > 0)
        bytes_.insert(bytes_.end(), chunk, chunk + in.gcount());
    if (in.bad()) throw Error(ErrorKind::Io, "--data: error while reading '" + path_ + "'");
    if (static_cast<std::int64_t>(bytes_.size()) < seqLen + 1)
        throwInvalid("--data: '" + path_ + "' has " + std::to_string(bytes_.size()) +
                     " bytes; at least " + std::to_string(seqLen + 1) + " (context + 1) are needed");
}

std::string ByteFileSource::describe() const {
    return "bytes of " + path_ + " (" + std::to_string(bytes_.size()) + " bytes, vocab 256)";
}

void ByteFileSource::fillSequence(std::int64_t step, std::int64_t globalIndex,
                                  std::span<std::int32_t> tokens) const {
    Rng rng(mixSeed(seed(), static_cast<std::uint64_t>(step), static_cast<std::uint64_t>(globalIndex)));
    const std::uint64_t starts = bytes_.size() - tokens.size() + 1;
    const std::size_t start = static_cast<std::size_t>(rng.below(starts));
    for (std::size_t i = 0; i < tokens.size(); ++i) tokens[i] = bytes_[start + i];
}

} // namespace shardscope::model
