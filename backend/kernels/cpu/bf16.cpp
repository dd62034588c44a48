#include "kernels/cpu/bf16.h"

#include "core/error.h"

namespace shardscope::kernels {

void toBf16(std::span<const float> in, std::span<Bf16> out) {
    if (in.size() != out.size()) throw Error(ErrorKind::Internal, "toBf16: size mismatch");
    for (std::size_t i = 0; i < in.size(); ++i) out[i] = toBf16(in[i]);
}

void toFloat(std::span<const Bf16> in, std::span<float> out) {
    if (in.size() != out.size()) throw Error(ErrorKind::Internal, "toFloat: size mismatch");
    for (std::size_t i = 0; i < in.size(); ++i) out[i] = toFloat(in[i]);
}

} // namespace shardscope::kernels
