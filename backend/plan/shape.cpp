// GPT shapes: parameter count, padding, validation (shape.h).
#include "plan/shape.h"

#include "core/error.h"
#include "plan/units.h"

#include <limits>

namespace shardscope::plan {

namespace {

// Parameter counts are kept ≤ 2^53 so every count is exact in a double (the CLI's parseCount
// has the same bound) and bytes = count × (≤ 1 KiB per element) still fit in 64 bits.
constexpr std::uint64_t kMaxParams = std::uint64_t{1} << 53;
// Every block is a unit with its own name and flat buffer; real GPTs have at most a few hundred.
constexpr std::int64_t kMaxLayers = 100'000;

std::uint64_t mulChecked(std::uint64_t a, std::uint64_t b, const char* what) {
    std::uint64_t r = 0;
    if (__builtin_mul_overflow(a, b, &r)) throwInvalid(std::string(what) + " overflows 64 bits");
    return r;
}

std::uint64_t addChecked(std::uint64_t a, std::uint64_t b, const char* what) {
    std::uint64_t r = 0;
    if (__builtin_add_overflow(a, b, &r)) throwInvalid(std::string(what) + " overflows 64 bits");
    return r;
}

void requirePositive(std::int64_t value, const char* field) {
    if (value < 1)
        throwInvalid(std::string("model shape: ") + field + " must be at least 1, got " +
                     std::to_string(value));
}

} // namespace

std::uint64_t paramCount(const GptShape& shape) {
    std::uint64_t total = 0;
    for (const auto& u : unitParams(shape))
        total += u.params;
    return total;
}

GptShape untiled(const GptShape& shape) {
    GptShape full = shape;
    full.tp = 1;
    return full;
}

std::uint64_t modelParamCount(const GptShape& shape) {
    return paramCount(untiled(shape));
}

std::uint64_t paddedElements(std::uint64_t elements, std::uint64_t shards) {
    if (shards <= 1) return elements;
    const std::uint64_t rem = elements % shards;
    return rem == 0 ? elements : elements + (shards - rem);
}

void validate(const GptShape& shape) {
    requirePositive(shape.layers, "layers");
    if (shape.layers > kMaxLayers)
        throwInvalid("model shape: layers must be at most " + std::to_string(kMaxLayers) +
                     ", got " + std::to_string(shape.layers));
    requirePositive(shape.dModel, "d_model");
    requirePositive(shape.heads, "heads");
    requirePositive(shape.vocab, "vocab");
    requirePositive(shape.seqLen, "seq_len");
    if (shape.dModel % shape.heads != 0)
        throwInvalid("model shape: d_model " + std::to_string(shape.dModel) +
                     " is not divisible by heads " + std::to_string(shape.heads));
    requirePositive(shape.tp, "tensor-parallel degree");
    if (shape.heads % shape.tp != 0)
        throwInvalid("tensor parallel " + std::to_string(shape.tp) + " does not divide the " +
                     std::to_string(shape.heads) + " attention heads");
    if ((4 * shape.dModel) % shape.tp != 0)
        throwInvalid("tensor parallel " + std::to_string(shape.tp) +
                     " does not divide the MLP width " + std::to_string(4 * shape.dModel));
    // Recompute the counts with overflow checks before anyone multiplies unchecked.
    const auto d = static_cast<std::uint64_t>(shape.dModel);
    const char* what = "model shape: parameter count";
    const std::uint64_t dd = mulChecked(d, d, what);
    const std::uint64_t block = addChecked(mulChecked(12, dd, what), mulChecked(13, d, what), what);
    const std::uint64_t blocks = mulChecked(block, static_cast<std::uint64_t>(shape.layers), what);
    const std::uint64_t vocabRows = mulChecked(static_cast<std::uint64_t>(shape.vocab), d, what);
    const std::uint64_t posRows = mulChecked(static_cast<std::uint64_t>(shape.seqLen), d, what);
    std::uint64_t total = addChecked(blocks, mulChecked(2, vocabRows, what), what);
    total = addChecked(addChecked(total, posRows, what), 2 * d, what);
    if (total > kMaxParams)
        throwInvalid("model shape: " + std::to_string(total) +
                     " parameters is too large (at most 2^53)");
}

} // namespace shardscope::plan
