#include "model/data.h"

#include "core/error.h"
#include "core/user_files.h"
#include "model/rng.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <unistd.h>

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
           std::to_string(branching_) + " successors per token, seed " + std::to_string(seed()) +
           ")";
}

void MarkovSource::fillSequence(std::int64_t step, std::int64_t globalIndex,
                                std::span<std::int32_t> tokens) const {
    Rng rng(
        mixSeed(seed(), static_cast<std::uint64_t>(step), static_cast<std::uint64_t>(globalIndex)));
    std::int32_t current = static_cast<std::int32_t>(rng.below(static_cast<std::uint64_t>(vocab_)));
    for (std::int32_t& token : tokens) {
        token = current;
        const double u = rng.uniform();
        const auto row = static_cast<std::size_t>(current) * static_cast<std::size_t>(branching_);
        int k = 0;
        while (k + 1 < branching_ && u >= cumulative_[row + static_cast<std::size_t>(k)])
            ++k;
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
    for (std::size_t t = 0; t < v; ++t)
        rate += pi[t] * stateEntropy[t];
    return rate;
}

ByteFileSource::ByteFileSource(const std::filesystem::path& path, std::int64_t seqLen,
                               std::int64_t microBatch, std::uint64_t seed)
    : DataSource(seqLen, microBatch, seed), path_(path.string()) {
    const auto [fd, size] =
        openInputFile(path_, "--data", static_cast<std::uint64_t>(seqLen) + 1, kMaxDataFileBytes);
    fd_ = fd;
    size_ = size;
}

ByteFileSource::~ByteFileSource() {
    if (fd_ >= 0) ::close(fd_);
}

std::string ByteFileSource::describe() const {
    return "bytes of " + path_ + " (" + std::to_string(size_) + " bytes, vocab 256)";
}

void ByteFileSource::fillSequence(std::int64_t step, std::int64_t globalIndex,
                                  std::span<std::int32_t> tokens) const {
    Rng rng(
        mixSeed(seed(), static_cast<std::uint64_t>(step), static_cast<std::uint64_t>(globalIndex)));
    const std::uint64_t starts = size_ - tokens.size() + 1;
    const auto start = static_cast<off_t>(rng.below(starts));
    std::vector<unsigned char> window(tokens.size());
    std::size_t done = 0;
    while (done < window.size()) {
        const ssize_t n = ::pread(fd_, window.data() + done, window.size() - done,
                                  start + static_cast<off_t>(done));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0)
            throw Error(ErrorKind::Io,
                        "--data: cannot read '" + path_ + "': " +
                            (n == 0 ? std::string("the file became shorter during the run")
                                    : ioErrorText(errno)));
        done += static_cast<std::size_t>(n);
    }
    for (std::size_t i = 0; i < tokens.size(); ++i)
        tokens[i] = window[i];
}

} // namespace shardscope::model
