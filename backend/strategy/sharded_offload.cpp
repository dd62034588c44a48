// ZeRO-Offload's tier crossings: what may be offloaded, copies into host-tier buffers, the
// device → host gradient shards and the host → device compute weights.
#include <cstring>
#include <string>
#include <utility>

#include "core/error.h"
#include "core/numeric.h"
#include "device/ops.h"
#include "offload/host_adamw.h"
#include "strategy/sharded.h"

namespace shardscope::strategy::detail {

void Sharded::validateOffload() const {
    const plan::Offload& o = config_.offload;
    const std::string name(plan::strategyName(config_.strategy));
    for (const auto& [tier, what] : {std::pair{o.optimizer, "--offload-optimizer"}, std::pair{o.param, "--offload-params"}})
        if (tier == Tier::Nvme) throwInvalid(std::string(what) + " nvme is not available in this build (host is)");
    if (o.optimizer != Tier::Device && !policy_.shardOptimizer)
        throwInvalid("--offload-optimizer needs a strategy that shards the optimizer (zero1, zero2, zero3, fsdp, "
                     "fsdp_grad_op, fsdp_hybrid), not " + name);
    if ((o.optimizer != Tier::Device || o.param != Tier::Device) && !mixed_)
        throwInvalid("offloading needs --precision bf16 (the host tier holds fp32 master weights and bf16 params)");
    if (o.param != Tier::Device && !policy_.shardParams)
        throwInvalid("--offload-params needs a strategy that shards params (zero3, fsdp, fsdp_grad_op, fsdp_hybrid), not " +
                     name);
}

void Sharded::put(const Buffer& to, std::uint64_t byteOffset, const void* from, std::uint64_t bytes) {
    if (bytes == 0) return;
    if (!onHost(to)) ops_.upload(to.ptr<char>() + byteOffset, from, bytes);
    else if (device_.holdsData()) std::memcpy(to.ptr<char>() + byteOffset, from, bytes);
}

void Sharded::intoHost(Buffer& to, std::uint64_t elementOffset, const void* deviceSrc, std::uint64_t count,
                       bool accumulate, std::int32_t unit) {
    char* dst = to.ptr<char>() + elementOffset * eb_;
    if (!accumulate) {
        if (device_.holdsData()) ops_.download(dst, deviceSrc, count * eb_);
        return;
    }
    Buffer staging = allocate(count, Category::Workspace, unit, false, Tier::Host);
    if (!device_.holdsData()) return;
    ops_.download(staging.data(), deviceSrc, count * eb_);
    offload::hostAccumulate(dst, staging.data(), count, mixed_);
}

void Sharded::roundMasterInto(UnitState& s, std::uint64_t offset, std::uint64_t count, void* out, bool outOnHost) {
    if (outOnHost) {
        if (device_.holdsData()) offload::hostToBf16(s.master.ptr<const float>() + offset, static_cast<Bf16*>(out), count);
        return;
    }
    // Rounded on the host, then one host → device copy of the compute weights.
    Buffer staging = device_.allocateArray<Bf16>(count, {Category::Workspace, Tier::Host, kNoUnit});
    if (device_.holdsData()) offload::hostToBf16(s.master.ptr<const float>() + offset, staging.ptr<Bf16>(), count);
    ops_.upload(out, staging.data(), count * sizeof(Bf16));
}


} // namespace shardscope::strategy::detail
