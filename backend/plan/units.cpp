// The units of a GPT shape and their tensor slots (units.h).
#include "plan/units.h"

#include "core/error.h"

namespace shardscope::plan {

UnitLayout::UnitLayout(std::string name, UnitKind kind, std::vector<TensorSlot> slots)
    : name_(std::move(name)), kind_(kind), slots_(std::move(slots)) {
    for (TensorSlot& s : slots_) {
        s.offset = elements_;
        elements_ += s.elements();
    }
}

std::uint64_t UnitLayout::paddedElements(std::uint64_t shards) const {
    return plan::paddedElements(elements_, shards);
}

const TensorSlot& UnitLayout::slot(std::string_view name) const {
    for (const TensorSlot& s : slots_)
        if (s.name == name) return s;
    throw Error(ErrorKind::Internal, "unit " + name_ + " has no tensor " + std::string(name));
}

namespace {

TensorSlot matrix(std::string name, std::int64_t rows, std::int64_t cols) {
    return TensorSlot{std::move(name), 0, rows, cols, true};
}
TensorSlot vec(std::string name, std::int64_t n) { return TensorSlot{std::move(name), 0, 1, n, false}; }

UnitLayout embeddingLayout(const GptShape& shape) {
    return UnitLayout("embedding", UnitKind::Embedding,
                      {matrix("wte", shape.vocab, shape.dModel), matrix("wpe", shape.seqLen, shape.dModel)});
}

UnitLayout blockLayout(std::int64_t index, std::int64_t d) {
    return UnitLayout("block" + std::to_string(index), UnitKind::Block,
                      {vec("ln1.weight", d), vec("ln1.bias", d), matrix("attn.qkv.weight", d, 3 * d),
                       vec("attn.qkv.bias", 3 * d), matrix("attn.proj.weight", d, d),
                       vec("attn.proj.bias", d), vec("ln2.weight", d), vec("ln2.bias", d),
                       matrix("mlp.fc.weight", d, 4 * d), vec("mlp.fc.bias", 4 * d),
                       matrix("mlp.proj.weight", 4 * d, d), vec("mlp.proj.bias", d)});
}

UnitLayout headLayout(const GptShape& shape) {
    const std::int64_t d = shape.dModel;
    return UnitLayout("head", UnitKind::Head,
                      {vec("ln_f.weight", d), vec("ln_f.bias", d), matrix("lm_head.weight", d, shape.vocab)});
}

} // namespace

std::vector<UnitLayout> unitLayouts(const GptShape& shape) {
    std::vector<UnitLayout> units;
    units.reserve(static_cast<std::size_t>(shape.layers + 2));
    units.push_back(embeddingLayout(shape));
    for (std::int64_t l = 0; l < shape.layers; ++l) units.push_back(blockLayout(l, shape.dModel));
    units.push_back(headLayout(shape));
    return units;
}

std::vector<UnitParams> unitParams(const GptShape& shape) {
    std::vector<UnitParams> units;
    units.reserve(static_cast<std::size_t>(shape.layers) + 2);
    units.push_back({"embedding", embeddingLayout(shape).elements()});
    const std::uint64_t block = blockLayout(0, shape.dModel).elements(); // every block is alike
    for (std::int64_t l = 0; l < shape.layers; ++l) units.push_back({"block" + std::to_string(l), block});
    units.push_back({"head", headLayout(shape).elements()});
    return units;
}

} // namespace shardscope::plan
