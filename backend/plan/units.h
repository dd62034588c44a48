#pragma once
// Sharding units and their flat-parameter layout (FSDP's FlatParameter): every unit's tensors
// live back to back in one contiguous buffer, in a fixed order, so a shard is a plain slice.
//
// Note: this is the one list of units. unitParams() (shape.h) counts the slots of
// unitLayouts(), so the theory engine's element counts and backend/model's allocations cannot
// drift apart. Weights are stored [in × out] row-major (GPT-2's Conv1D layout: y = x·W + b).
#include "plan/shape.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace shardscope::plan {

enum class UnitKind : std::uint8_t { Embedding, Block, Head };

// How a tensor is split over the TP group (Megatron): Columns — the output features of a
// column-parallel linear (its weight's columns and its bias), in `groups` equal groups that are
// each split T ways (QKV: 3 groups, so a rank owns the Q, K and V columns of its heads);
// Rows — the input features of a row-parallel linear (its weight's rows); Replicated — every TP
// rank holds the whole tensor (embedding, head, LayerNorms, row-parallel biases) and computes
// the same gradient for it from the same replicated activations.
enum class TpSplit : std::uint8_t { Replicated, Columns, Rows };

struct TensorSlot {
    std::string name;         // e.g. "attn.qkv.weight"
    std::uint64_t offset = 0; // elements from the start of the unit's flat buffer
    std::int64_t rows = 1;    // [rows × cols]; vectors have rows = 1
    std::int64_t cols = 0;
    bool decay = false; // AdamW weight decay applies (matrices, not biases/LayerNorm)
    TpSplit tp = TpSplit::Replicated;
    std::int64_t groups = 1; // TpSplit::Columns: column groups split T ways each
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
    std::uint64_t shardElements(std::uint64_t shards) const {
        return paddedElements(shards) / shards;
    }
    const TensorSlot& slot(std::string_view name) const; // throws Error(Internal) if absent

private:
    std::string name_;
    UnitKind kind_;
    std::vector<TensorSlot> slots_;
    std::uint64_t elements_ = 0;
};

// [embedding, block0 … block{L−1}, head]:
// embedding: wte (vocab × d) + wpe (seqLen × d)
// block:     ln1 2d, qkv 3d²+3d, proj d²+d, ln2 2d, fc 4d²+4d, fc_proj 4d²+d  = 12d² + 13d
// head:      final LN 2d + untied LM head d × vocab (no bias)
// With shape.tp = T > 1 each block is one TP rank's slice (qkv d × 3d/T, proj d/T × d, fc
// d × 4d/T, fc_proj 4d/T × d; LayerNorms and the projections' biases whole): every TP rank's
// slice has the same layout.
std::vector<UnitLayout> unitLayouts(const GptShape& shape);

// Copies between a unit's whole tensors (`full`, the layout of unitLayouts(untiled(shape)))
// and TP rank `tpRank`'s slice of them (`slice`, the layout of unitLayouts(shape)).
// toSlice: full → slice; otherwise slice → full, writing only the part the slice holds
// (replicated tensors whole).
void copyTpSlice(const UnitLayout& fullLayout, const UnitLayout& sliceLayout, std::int64_t tp,
                 std::int64_t tpRank, float* full, float* slice, bool toSlice);

} // namespace shardscope::plan
