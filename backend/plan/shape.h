#pragma once
// GPT shapes, their units' sizes, parameter count and shard padding. Pure functions, no I/O.
// The units' tensor slots are units.h (the model's view; theory and the GUI need only sizes).
#include <cstdint>
#include <string>
#include <vector>

namespace shardscope::plan {

// GPT-2-style decoder (DESIGN.md): token + position embedding, L blocks of
// (LN → causal MHA → residual, LN → MLP 4d with GELU → residual), final LN, untied LM head.
struct GptShape {
    std::int64_t layers = 0;
    std::int64_t dModel = 0;
    std::int64_t heads = 0;
    std::int64_t vocab = 0;
    std::int64_t seqLen = 0; // context length (position-embedding rows)
};

struct UnitParams {
    std::string name;     // "embedding", "block0" … "block{L-1}", "head"
    std::uint64_t params; // elements, before padding
};
// The units' names and element counts: the slots of unitLayouts (units.h) counted, cheap at
// any depth.
std::vector<UnitParams> unitParams(const GptShape& shape);
// Σ of unitParams(shape).
std::uint64_t paramCount(const GptShape& shape);

// A unit's flat buffer is padded to a multiple of the shard count so every shard has the
// same size (FSDP's flat parameter). Returns the padded element count.
std::uint64_t paddedElements(std::uint64_t elements, std::uint64_t shards);

// Throws Error(InvalidArgument) naming the field when a shape is unusable
// (non-positive, d not divisible by heads, or counts that overflow 64 bits).
void validate(const GptShape& shape);

} // namespace shardscope::plan
