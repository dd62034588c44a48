#pragma once
// Sharding units and their flat-parameter layout (FSDP's FlatParameter): every unit's tensors
// live back to back in one contiguous buffer, in a fixed order, so a shard is a plain slice.
//
// Note: the element counts equal theory::unitParams(shape) unit by unit (tests check it);
// weights are stored [in × out] row-major (GPT-2's Conv1D layout: y = x·W + b).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "theory/shape.h"

namespace shardscope::model {

enum class UnitKind : std::uint8_t { Embedding, Block, Head };

struct TensorSlot {
    std::string name;          // e.g. "attn.qkv.weight"
    std::uint64_t offset = 0;  // elements from the start of the unit's flat buffer
    std::int64_t rows = 1;     // [rows × cols]; vectors have rows = 1
    std::int64_t cols = 0;
    bool decay = false;        // AdamW weight decay applies (matrices, not biases/LayerNorm)
    std::uint64_t elements() const { return static_cast<std::uint64_t>(rows * cols); }
};

class UnitLayout {
public:
    UnitLayout(std::string name, UnitKind kind, std::vector<TensorSlot> slots);

    const std::string& name() const { return name_; }
    UnitKind kind() const { return kind_; }
    const std::vector<TensorSlot>& slots() const { return slots_; }
    std::uint64_t elements() const { return elements_; } // before padding
    // Elements padded to a multiple of `shards` so every rank's shard has the same size.
    std::uint64_t paddedElements(std::uint64_t shards) const;
    std::uint64_t shardElements(std::uint64_t shards) const { return paddedElements(shards) / shards; }
    const TensorSlot& slot(std::string_view name) const; // throws Error(Internal) if absent

private:
    std::string name_;
    UnitKind kind_;
    std::vector<TensorSlot> slots_;
    std::uint64_t elements_ = 0;
};

// [embedding, block0 … block{L−1}, head], matching theory::unitParams.
std::vector<UnitLayout> unitLayouts(const theory::GptShape& shape);

// GPT-2 initialisation, deterministic in (seed, unit index): weights N(0, 0.02), the two
// residual projections N(0, 0.02/√(2L)), biases 0, LayerNorm γ = 1, β = 0. `flat` may be
// longer than the layout (padding); the padding is set to 0.
void initUnit(const UnitLayout& layout, std::int64_t layers, std::uint64_t seed,
              std::int32_t unitIndex, float* flat, std::uint64_t flatElements);

} // namespace shardscope::model
