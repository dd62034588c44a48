#pragma once
// GPT shapes and their sharding units. Pure functions, no I/O.
//
// Note: the unit list and per-unit parameter counts here are the contract with
// backend/model's flat-parameter layout: model::GptModel must allocate exactly
// unitParams(shape)[u].params elements for unit u (before padding), in this order.
#include <cstdint>
#include <string>
#include <vector>

namespace shardscope::theory {

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

// embedding: vocab·d + seqLen·d
// block:     12d² + 13d  (ln1 2d, qkv 3d²+3d, proj d²+d, ln2 2d, fc 4d²+4d, fc_proj 4d²+d)
// head:      2d + vocab·d (final LN, LM head without bias)
std::vector<UnitParams> unitParams(const GptShape& shape);
std::uint64_t paramCount(const GptShape& shape);

// A unit's flat buffer is padded to a multiple of the shard count so every shard has the
// same size (FSDP's flat parameter). Returns the padded element count.
std::uint64_t paddedElements(std::uint64_t elements, std::uint64_t shards);

// Throws Error(InvalidArgument) naming the field when a shape is unusable
// (non-positive, d not divisible by heads, or counts that overflow 64 bits).
void validate(const GptShape& shape);

} // namespace shardscope::theory
