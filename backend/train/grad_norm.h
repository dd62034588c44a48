#pragma once
// The global gradient norm, exactly: the same value for any partition of the gradient over
// ranks and any summation order, so DDP, ZeRO and FSDP clip by bit-identical coefficients.
//
// Note: every g² (exact in a double for fp32/bf16 g) is truncated to a fixed-point integer in
// units of 2^(2e − K), where 2^e bounds max|g| over all ranks (an exact max-reduction) and K
// leaves room for the sum of every element in 128 bits. Integer addition is associative, so
// the per-rank partials and their cross-rank sum (four exact 32-bit limbs through
// Communicator::sumScalar) do not depend on who owned which elements. Elements below
// 2^(−K)·max|g|² (K ≥ 70 for any model that fits in memory) are dropped: far below the fp32
// rounding of the clip coefficient.
#include "comm/communicator.h"
#include "device/ops.h"

#include <cstdint>
#include <span>

namespace shardscope::train {

struct GradRange {
    const void* data = nullptr;
    std::uint64_t count = 0;
    bool bf16 = true;
};

// Σ g² over the ranges of every rank of `world` (collective). `totalElements` bounds the number
// of elements summed over all ranks (the model's padded parameter count).
// The per-rank passes run on the device (`ops`: the ranges are its memory).
double globalSquaredNorm(std::span<const GradRange> local, device::Ops& ops,
                         comm::Communicator& world, std::uint64_t totalElements);

} // namespace shardscope::train
