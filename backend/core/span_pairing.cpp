#include "core/span_pairing.h"

namespace shardscope {

std::optional<SpanKey> spanKeyOf(const Event& e) {
    switch (e.kind) {
    case EventKind::ComputeBegin:
    case EventKind::ComputeEnd:
        return SpanKey{SpanClass::Compute, e.unit, static_cast<std::uint8_t>(e.phase)};
    case EventKind::CollectiveBegin:
    case EventKind::CollectiveEnd:
        return SpanKey{SpanClass::Collective, e.unit, static_cast<std::uint8_t>(e.collective)};
    case EventKind::Alloc:
    case EventKind::Free:
        return SpanKey{SpanClass::Buffer, e.unit, static_cast<std::uint8_t>(e.category)};
    case EventKind::TransferBegin:
    case EventKind::TransferEnd:
        return SpanKey{SpanClass::Transfer, e.unit, static_cast<std::uint8_t>(e.transfer)};
    case EventKind::TransferWait: // a mark inside an open transfer span, neither begin nor end
    case EventKind::StepBegin:
    case EventKind::StepEnd:
        break;
    }
    return std::nullopt;
}

bool opensSpan(EventKind k) {
    return k == EventKind::ComputeBegin || k == EventKind::CollectiveBegin ||
           k == EventKind::Alloc || k == EventKind::TransferBegin;
}

} // namespace shardscope
