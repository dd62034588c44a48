#include "model/layout.h"

#include <cmath>

#include "core/error.h"
#include "model/rng.h"

namespace shardscope::model {

UnitLayout::UnitLayout(std::string name, UnitKind kind, std::vector<TensorSlot> slots)
    : name_(std::move(name)), kind_(kind), slots_(std::move(slots)) {
    for (TensorSlot& s : slots_) {
        s.offset = elements_;
        elements_ += s.elements();
    }
}

std::uint64_t UnitLayout::paddedElements(std::uint64_t shards) const {
    return theory::paddedElements(elements_, shards);
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

UnitLayout blockLayout(std::int64_t index, std::int64_t d) {
    return UnitLayout("block" + std::to_string(index), UnitKind::Block,
                      {vec("ln1.weight", d), vec("ln1.bias", d), matrix("attn.qkv.weight", d, 3 * d),
                       vec("attn.qkv.bias", 3 * d), matrix("attn.proj.weight", d, d),
                       vec("attn.proj.bias", d), vec("ln2.weight", d), vec("ln2.bias", d),
                       matrix("mlp.fc.weight", d, 4 * d), vec("mlp.fc.bias", 4 * d),
                       matrix("mlp.proj.weight", 4 * d, d), vec("mlp.proj.bias", d)});
}

} // namespace

std::vector<UnitLayout> unitLayouts(const theory::GptShape& shape) {
    const std::int64_t d = shape.dModel;
    std::vector<UnitLayout> units;
    units.reserve(static_cast<std::size_t>(shape.layers + 2));
    units.emplace_back("embedding", UnitKind::Embedding,
                       std::vector<TensorSlot>{matrix("wte", shape.vocab, d),
                                               matrix("wpe", shape.seqLen, d)});
    for (std::int64_t l = 0; l < shape.layers; ++l) units.push_back(blockLayout(l, d));
    units.emplace_back("head", UnitKind::Head,
                       std::vector<TensorSlot>{vec("ln_f.weight", d), vec("ln_f.bias", d),
                                               matrix("lm_head.weight", d, shape.vocab)});
    return units;
}

void initUnit(const UnitLayout& layout, std::int64_t layers, std::uint64_t seed,
              std::int32_t unitIndex, float* flat, std::uint64_t flatElements) {
    if (flatElements < layout.elements())
        throw Error(ErrorKind::Internal, "initUnit: buffer smaller than unit " + layout.name());
    Rng rng(mixSeed(seed, 0x1417u, static_cast<std::uint64_t>(unitIndex)));
    const double residualStd = 0.02 / std::sqrt(2.0 * static_cast<double>(layers));
    for (const TensorSlot& s : layout.slots()) {
        float* p = flat + s.offset;
        const bool isLnWeight = s.name.find("ln") == 0 && s.name.ends_with(".weight");
        if (s.decay) {
            const bool residual = s.name == "attn.proj.weight" || s.name == "mlp.proj.weight";
            const double stddev = residual ? residualStd : 0.02;
            for (std::uint64_t i = 0; i < s.elements(); ++i)
                p[i] = static_cast<float>(rng.normal() * stddev);
        } else {
            const float value = isLnWeight ? 1.0f : 0.0f;
            for (std::uint64_t i = 0; i < s.elements(); ++i) p[i] = value;
        }
    }
    for (std::uint64_t i = layout.elements(); i < flatElements; ++i) flat[i] = 0.0f;
}

} // namespace shardscope::model
