#include "common/theory_names.h"

#include <QCoreApplication>

namespace shardscope::widgets {

using plan::PrecisionKind;
using plan::Strategy;

QString strategyLabel(Strategy s) {
    switch (s) {
    case Strategy::Ddp:
        return QCoreApplication::translate("Strategy", "DDP (no sharding)");
    case Strategy::Zero1:
        return QCoreApplication::translate("Strategy", "ZeRO-1 (optimizer states)");
    case Strategy::Zero2:
        return QCoreApplication::translate("Strategy", "ZeRO-2 (+ gradients)");
    case Strategy::Zero3:
        return QCoreApplication::translate("Strategy", "ZeRO-3 (+ parameters)");
    case Strategy::FsdpFullShard:
        return QCoreApplication::translate("Strategy", "FSDP full shard");
    case Strategy::FsdpShardGradOp:
        return QCoreApplication::translate("Strategy", "FSDP shard grad-op");
    case Strategy::FsdpHybridShard:
        return QCoreApplication::translate("Strategy", "FSDP hybrid shard");
    }
    return {};
}

QString strategyShortLabel(Strategy s) {
    switch (s) {
    case Strategy::Ddp:
        return QStringLiteral("DDP");
    case Strategy::Zero1:
        return QStringLiteral("ZeRO-1");
    case Strategy::Zero2:
        return QStringLiteral("ZeRO-2");
    case Strategy::Zero3:
        return QStringLiteral("ZeRO-3");
    case Strategy::FsdpFullShard:
        return QStringLiteral("FSDP full");
    case Strategy::FsdpShardGradOp:
        return QStringLiteral("FSDP grad-op");
    case Strategy::FsdpHybridShard:
        return QStringLiteral("FSDP hybrid");
    }
    return {};
}

QString precisionLabel(PrecisionKind k) {
    switch (k) {
    case PrecisionKind::MixedBf16:
        return QCoreApplication::translate("Precision", "bf16 mixed (2+2+12 B)");
    case PrecisionKind::MixedFp16:
        return QCoreApplication::translate("Precision", "fp16 mixed (2+2+12 B)");
    case PrecisionKind::Fp32:
        return QCoreApplication::translate("Precision", "fp32 (4+4+8 B)");
    case PrecisionKind::Custom:
        return QCoreApplication::translate("Precision", "Custom K");
    }
    return {};
}

} // namespace shardscope::widgets
