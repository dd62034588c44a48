#pragma once
// GPT shapes, their units' sizes, parameter count and shard padding. Pure functions, no I/O.
// The units' tensor slots are units.h (the model's view; theory and the GUI need only sizes).
#include <cstdint>
#include <string>
#include <vector>

namespace shardscope::plan {

// GPT-2-style decoder (docs/design.md): token + position embedding, L blocks of
// (LN → causal MHA → residual, LN → MLP 4d with GELU → residual), final LN, untied LM head.
struct GptShape {
    std::int64_t layers = 0;
    std::int64_t dModel = 0;
    std::int64_t heads = 0;
    std::int64_t vocab = 0;
    std::int64_t seqLen = 0; // context length (position-embedding rows)
    // Tensor-parallel degree T (Megatron-style): the shape describes ONE TP rank's slice of
    // every block (heads / T attention heads, 4d / T MLP columns). Embedding, head, LayerNorms
    // and the row-parallel biases are replicated on every TP rank. 1: no tensor parallelism.
    std::int64_t tp = 1;
};

struct UnitParams {
    std::string name;     // "embedding", "block0" … "block{L-1}", "head"
    std::uint64_t params; // elements, before padding
};
// The units' names and element counts: the slots of unitLayouts (units.h) counted, cheap at
// any depth.
std::vector<UnitParams> unitParams(const GptShape& shape);
// Σ of unitParams(shape): the parameters one TP rank holds (the whole model when tp = 1).
std::uint64_t paramCount(const GptShape& shape);
// The whole model's parameter count Ψ, whatever shape.tp says.
std::uint64_t modelParamCount(const GptShape& shape);
// The same shape without tensor parallelism (tp = 1).
GptShape untiled(const GptShape& shape);

// A unit's flat buffer is padded to a multiple of the shard count so every shard has the
// same size (FSDP's flat parameter). Returns the padded element count.
std::uint64_t paddedElements(std::uint64_t elements, std::uint64_t shards);

// Throws Error(InvalidArgument) naming the field when a shape is unusable
// (non-positive, d not divisible by heads, a tp that does not divide the heads or the MLP
// width, or counts that overflow 64 bits).
void validate(const GptShape& shape);

} // namespace shardscope::plan
