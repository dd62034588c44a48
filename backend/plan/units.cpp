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

TensorSlot matrix(std::string name, std::int64_t rows, std::int64_t cols,
                  TpSplit tp = TpSplit::Replicated, std::int64_t groups = 1) {
    return TensorSlot{std::move(name), 0, rows, cols, true, tp, groups};
}
TensorSlot vec(std::string name, std::int64_t n, TpSplit tp = TpSplit::Replicated,
               std::int64_t groups = 1) {
    return TensorSlot{std::move(name), 0, 1, n, false, tp, groups};
}

UnitLayout embeddingLayout(const GptShape& shape) {
    return UnitLayout(
        "embedding", UnitKind::Embedding,
        {matrix("wte", shape.vocab, shape.dModel), matrix("wpe", shape.seqLen, shape.dModel)});
}

// tp: the TP degree (validate() has checked that it divides d and 4d).
UnitLayout blockLayout(std::int64_t index, std::int64_t d, std::int64_t tp) {
    if (tp < 1 || d % tp != 0)
        throwInvalid("tensor parallel " + std::to_string(tp) + " does not divide d_model " +
                     std::to_string(d));
    const std::int64_t dt = d / tp, ft = 4 * d / tp;
    return UnitLayout("block" + std::to_string(index), UnitKind::Block,
                      {vec("ln1.weight", d), vec("ln1.bias", d),
                       matrix("attn.qkv.weight", d, 3 * dt, TpSplit::Columns, 3),
                       vec("attn.qkv.bias", 3 * dt, TpSplit::Columns, 3),
                       matrix("attn.proj.weight", dt, d, TpSplit::Rows), vec("attn.proj.bias", d),
                       vec("ln2.weight", d), vec("ln2.bias", d),
                       matrix("mlp.fc.weight", d, ft, TpSplit::Columns),
                       vec("mlp.fc.bias", ft, TpSplit::Columns),
                       matrix("mlp.proj.weight", ft, d, TpSplit::Rows), vec("mlp.proj.bias", d)});
}

UnitLayout headLayout(const GptShape& shape) {
    const std::int64_t d = shape.dModel;
    return UnitLayout(
        "head", UnitKind::Head,
        {vec("ln_f.weight", d), vec("ln_f.bias", d), matrix("lm_head.weight", d, shape.vocab)});
}

} // namespace

std::vector<UnitLayout> unitLayouts(const GptShape& shape) {
    std::vector<UnitLayout> units;
    units.reserve(static_cast<std::size_t>(shape.layers + 2));
    units.push_back(embeddingLayout(shape));
    for (std::int64_t l = 0; l < shape.layers; ++l)
        units.push_back(blockLayout(l, shape.dModel, shape.tp));
    units.push_back(headLayout(shape));
    return units;
}

std::vector<UnitParams> unitParams(const GptShape& shape) {
    std::vector<UnitParams> units;
    units.reserve(static_cast<std::size_t>(shape.layers) + 2);
    units.push_back({"embedding", embeddingLayout(shape).elements()});
    const std::uint64_t block =
        blockLayout(0, shape.dModel, shape.tp).elements(); // every block is alike
    for (std::int64_t l = 0; l < shape.layers; ++l)
        units.push_back({"block" + std::to_string(l), block});
    units.push_back({"head", headLayout(shape).elements()});
    return units;
}

void copyTpSlice(const UnitLayout& fullLayout, const UnitLayout& sliceLayout, std::int64_t tp,
                 std::int64_t tpRank, float* full, float* slice, bool toSlice) {
    if (fullLayout.slots().size() != sliceLayout.slots().size() || tpRank < 0 || tpRank >= tp)
        throw Error(ErrorKind::Internal,
                    "copyTpSlice: unit " + sliceLayout.name() + " is not a TP slice");
    for (std::size_t i = 0; i < sliceLayout.slots().size(); ++i) {
        const TensorSlot& f = fullLayout.slots()[i];
        const TensorSlot& s = sliceLayout.slots()[i];
        float* whole = full + f.offset;
        float* part = slice + s.offset;
        // Row r of the slice is row rowFrom + r of the whole; its columns are `groups` runs of
        // `run` columns, run g starting at column g × fullGroup + tpRank × run of the whole.
        std::int64_t rowFrom = 0, run = s.cols, fullGroup = 0;
        const std::int64_t groups = s.tp == TpSplit::Columns ? s.groups : 1;
        if (s.tp == TpSplit::Rows) rowFrom = tpRank * s.rows;
        if (s.tp == TpSplit::Columns) {
            run = s.cols / groups;
            fullGroup = f.cols / groups;
        }
        if (s.rows + rowFrom > f.rows || run * groups != s.cols ||
            (s.tp == TpSplit::Columns && run * tp != fullGroup))
            throw Error(ErrorKind::Internal,
                        "copyTpSlice: tensor " + s.name + " does not match its whole");
        for (std::int64_t r = 0; r < s.rows; ++r)
            for (std::int64_t g = 0; g < groups; ++g) {
                float* a = whole + (rowFrom + r) * f.cols + g * fullGroup +
                           tpRank * (s.tp == TpSplit::Columns ? run : 0);
                float* b = part + r * s.cols + g * run;
                for (std::int64_t c = 0; c < run; ++c) {
                    if (toSlice)
                        b[c] = a[c];
                    else
                        a[c] = b[c];
                }
            }
    }
}

} // namespace shardscope::plan
