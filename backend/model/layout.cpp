#include "model/layout.h"

#include "core/error.h"
#include "model/rng.h"

#include <cmath>

namespace shardscope::model {

void initUnit(const plan::UnitLayout& layout, std::int64_t layers, std::uint64_t seed,
              std::int32_t unitIndex, float* flat, std::uint64_t flatElements) {
    if (flatElements < layout.elements())
        throw Error(ErrorKind::Internal, "initUnit: buffer smaller than unit " + layout.name());
    Rng rng(mixSeed(seed, 0x1417u, static_cast<std::uint64_t>(unitIndex)));
    const double residualStd = 0.02 / std::sqrt(2.0 * static_cast<double>(layers));
    for (const plan::TensorSlot& s : layout.slots()) {
        float* p = flat + s.offset;
        const bool isLnWeight = s.name.find("ln") == 0 && s.name.ends_with(".weight");
        if (s.decay) {
            const bool residual = s.name == "attn.proj.weight" || s.name == "mlp.proj.weight";
            const double stddev = residual ? residualStd : 0.02;
            for (std::uint64_t i = 0; i < s.elements(); ++i)
                p[i] = static_cast<float>(rng.normal() * stddev);
        } else {
            const float value = isLnWeight ? 1.0f : 0.0f;
            for (std::uint64_t i = 0; i < s.elements(); ++i)
                p[i] = value;
        }
    }
    for (std::uint64_t i = layout.elements(); i < flatElements; ++i)
        flat[i] = 0.0f;
}

} // namespace shardscope::model
