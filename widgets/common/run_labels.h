#pragma once
// Translated names for the event vocabulary (phases, collectives) and the one-line story of
// each strategy, shared by the rank view, the replay controls and the page header.
#include "core/event.h"
#include "plan/strategy.h"
#include "replay/timeline_index.h"
#include "report/report.h"

#include <QString>
#include <optional>
#include <string>

namespace shardscope::widgets {

QString phaseLabel(Phase p);               // "forward", "backward", …
QString collectiveLabel(CollectiveOp c);   // "all-gather", "reduce-scatter", …
QString transferLabel(Transfer t);         // "device → host", "NVMe read", …
QString spanKindLabel(replay::SpanKind k); // a phase, a collective, or "gathered parameters"
// The same where room is short (a timeline bar, a chart's legend): a collective by its term alone
// ("all-gather", not the gloss a language adds to it), so the unit beside it stays readable.
QString collectiveShortLabel(CollectiveOp c);
QString spanKindShortLabel(replay::SpanKind k);
// What this strategy shards and what it gathers, in one sentence for newcomers.
QString strategyStory(plan::Strategy s, int ranks, int hybridGroup);
std::optional<plan::Strategy> strategyFromName(const std::string& name);
// Where a failure happened, for people: protocol steps count from 0 (−1 = setup), the CLI's
// and the worker's messages count from 1 — so "in step 3" means the same step everywhere.
// Where the dry run puts the peak (theory's peakPhase: "backward of block1", "parameter
// all-gather", …), in the UI's language; a phrase it does not know is shown as written.
QString peakPhaseLabel(const std::string& phase);
QString failureWhen(std::int64_t protocolStep, std::int64_t stepsBefore = 0);
// Exposed communication, for tooltips: the share of the step spent waiting for communication
// that no compute hid (union of intervals) — what the reports' exposed_comm figures mean.
QString exposedCommExplanation();
// The same for tier transfers (train/overlap.h), and the report's per-rank line ("" when the run
// moved nothing between tiers).
QString exposedTransferExplanation();
QString exposedTransferText(const report::RunReport& report);
QString percentText(double fraction); // 0.4706 → "47.1%"
// What `rank`'s collectives of one step would take on GPUs linked by NVLink (theory/link.h's
// α-β estimate, labelled as one) beside the communication it measured per step; "" when the
// rank sent nothing. TP all-reduces run over groups of `tensorParallel`, the rest over N/T.
QString gpuLinkEstimateText(const report::RunReport& report, int rank, int tensorParallel);
QString gpuLinkEstimateExplanation();

} // namespace shardscope::widgets
