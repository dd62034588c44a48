#include "replay/run_data.h"

#include "core/error.h"
#include "core/span_pairing.h"

#include <algorithm>
#include <utility>

namespace shardscope::replay {

RunInfo parseRunInfo(const std::string& configJson, int worldSize) {
    report::Parsed<RunInfo> info = report::parseRunInfo(configJson, worldSize);
    if (!info) throw Error(ErrorKind::Format, info.error);
    return std::move(*info.value);
}

namespace {

SpanKey computeKey(std::int32_t unit, Phase phase) {
    return {SpanClass::Compute, unit, static_cast<std::uint8_t>(phase)};
}
SpanKey collectiveKey(std::int32_t unit, CollectiveOp op) {
    return {SpanClass::Collective, unit, static_cast<std::uint8_t>(op)};
}

} // namespace

void applyEvent(RankState& s, const Event& e) {
    s.step = e.step;
    switch (e.kind) {
    case EventKind::Alloc:
        s.live.at(e.category, e.tier) += e.bytes;
        s.liveTotal += e.bytes;
        if (s.liveTotal > s.peakTotal) s.peakTotal = s.liveTotal;
        if (const std::uint64_t t = s.live.tier(e.tier); t > s.peakByTier[index(e.tier)])
            s.peakByTier[index(e.tier)] = t;
        if (e.category == Category::ParamFull && e.unit >= 0 &&
            static_cast<std::size_t>(e.unit) < kTrackedUnits)
            ++s.gathered[static_cast<std::size_t>(e.unit)];
        break;
    case EventKind::Free: {
        std::uint64_t& cell = s.live.at(e.category, e.tier);
        const std::uint64_t freed = e.bytes < cell ? e.bytes : cell;
        cell -= freed;
        s.liveTotal -= freed;
        if (e.category == Category::ParamFull && e.unit >= 0 &&
            static_cast<std::size_t>(e.unit) < kTrackedUnits) {
            std::uint16_t& n = s.gathered[static_cast<std::size_t>(e.unit)];
            if (n > 0) --n;
        }
        break;
    }
    case EventKind::ComputeBegin:
        if (s.phase != Phase::None) {
            s.outerComputeUnit = s.computeUnit;
            s.outerPhase = s.phase;
        }
        s.computeUnit = e.unit;
        s.phase = e.phase;
        break;
    case EventKind::ComputeEnd: {
        const std::optional<SpanKey> key = spanKeyOf(e);
        if (s.phase != Phase::None && key == computeKey(s.computeUnit, s.phase)) {
            s.computeUnit = std::exchange(s.outerComputeUnit, kNoUnit);
            s.phase = std::exchange(s.outerPhase, Phase::None);
        } else if (s.outerPhase != Phase::None &&
                   key == computeKey(s.outerComputeUnit, s.outerPhase)) {
            s.outerComputeUnit = kNoUnit;
            s.outerPhase = Phase::None;
        }
        break;
    }
    case EventKind::CollectiveBegin:
        if (s.collective != CollectiveOp::None) {
            s.outerUnit = s.collectiveUnit;
            s.outerCollective = s.collective;
            s.outerBytes = s.collectiveBytes;
        }
        s.collectiveUnit = e.unit;
        s.collective = e.collective;
        s.collectiveBytes = e.bytes;
        break;
    case EventKind::CollectiveEnd: {
        const std::optional<SpanKey> key = spanKeyOf(e);
        if (s.collective != CollectiveOp::None &&
            key == collectiveKey(s.collectiveUnit, s.collective)) {
            s.collectiveUnit = std::exchange(s.outerUnit, kNoUnit);
            s.collective = std::exchange(s.outerCollective, CollectiveOp::None);
            s.collectiveBytes = std::exchange(s.outerBytes, 0);
        } else if (s.outerCollective != CollectiveOp::None &&
                   key == collectiveKey(s.outerUnit, s.outerCollective)) {
            s.outerUnit = kNoUnit;
            s.outerCollective = CollectiveOp::None;
            s.outerBytes = 0;
        }
        break;
    }
    case EventKind::TransferBegin:
    case EventKind::TransferEnd:
    case EventKind::TransferWait:
    case EventKind::StepBegin:
    case EventKind::StepEnd:
        break;
    }
}

} // namespace shardscope::replay
