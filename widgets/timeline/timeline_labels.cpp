// The words on the Timeline's bars (timeline_labels.h).
#include "timeline/timeline_labels.h"

#include "common/run_labels.h"

namespace shardscope::widgets {

namespace {

// The chunk of `rank`'s stage that holds `unit` (interleaved), or -1 with one chunk a stage.
int chunkOf(const TimelineScene& s, int rank, std::int32_t unit) {
    const report::RunInfo* info = s.model ? s.model->info().get() : nullptr;
    if (!info || info->virtualStages <= 1 || info->pipeParallel <= 1) return -1;
    const auto chunks = info->stageChunks(info->stageOf(rank));
    for (std::size_t c = 0; c < chunks.size(); ++c)
        if (unit >= chunks[c].first && unit < chunks[c].second) return static_cast<int>(c);
    return -1;
}

} // namespace

QString timelineBoxLabel(const TimelineScene& s, const replay::TimelineSpan& span, bool microLabels,
                         int rank) {
    QString unit;
    if (span.unit >= 0)
        unit = s.model && s.model->info()
                   ? QString::fromStdString(s.model->info()->unitName(span.unit))
                   : TimelinePainter::tr("unit %1").arg(span.unit);
    const bool micro = microLabels && span.microBatch >= 0;
    // The unit first: a bar too short for both keeps the unit, which its colour cannot say.
    if (replay::isCollective(span.kind) || replay::isTransfer(span.kind)) {
        QString text = unit.isEmpty() ? spanKindShortLabel(span.kind)
                                      : unit + QLatin1Char(' ') + spanKindShortLabel(span.kind);
        if (micro &&
            (span.kind == replay::SpanKind::PipeSend || span.kind == replay::SpanKind::PipeRecv))
            text += QLatin1Char(' ') + TimelinePainter::tr("#%1").arg(span.microBatch);
        return text;
    }
    if (span.kind == replay::SpanKind::Optimizer || span.kind == replay::SpanKind::Save)
        return spanKindLabel(span.kind);
    // The pipeline picture's names: F3 = micro-batch 3's forward, B3 its backward (its input
    // gradients where the schedule splits it), W3 its weight gradients; with virtual stages
    // F3.1 = micro-batch 3 through the rank's chunk 1.
    const int chunk = micro ? chunkOf(s, rank, span.unit) : -1;
    if (chunk >= 0 &&
        (span.kind == replay::SpanKind::Forward || span.kind == replay::SpanKind::Backward))
        return (span.kind == replay::SpanKind::Forward ? TimelinePainter::tr("F%1.%2 %3")
                                                       : TimelinePainter::tr("B%1.%2 %3"))
            .arg(span.microBatch)
            .arg(chunk)
            .arg(unit)
            .trimmed();
    if (micro && span.kind == replay::SpanKind::Forward)
        return TimelinePainter::tr("F%1 %2").arg(span.microBatch).arg(unit).trimmed();
    if (micro && span.kind == replay::SpanKind::Backward)
        return TimelinePainter::tr("B%1 %2").arg(span.microBatch).arg(unit).trimmed();
    if (micro && span.kind == replay::SpanKind::WeightGrad)
        return TimelinePainter::tr("W%1 %2").arg(span.microBatch).arg(unit).trimmed();
    return unit;
}

} // namespace shardscope::widgets
