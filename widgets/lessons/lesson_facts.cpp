#include "lessons/lesson_facts.h"

#include "common/byte_format.h"
#include "common/run_labels.h"
#include "common/theory_names.h"
#include "core/categories.h"
#include "core/step_number.h"
#include "plan/pipeline.h"
#include "playback/explain_text.h"
#include "replay/timeline_index.h"
#include "run/replay_player.h"
#include "run/run_document.h"
#include "theory/pipeline.h"

#include <QCoreApplication>
#include <QLocale>
#include <QRegularExpression>
#include <algorithm>

namespace shardscope::widgets {
namespace {

QString key(std::string_view prefix, std::string_view name) {
    return QString::fromLatin1(prefix.data(), static_cast<int>(prefix.size())) +
           QString::fromLatin1(name.data(), static_cast<int>(name.size()));
}

QString ratio(double value) {
    return QLocale().toString(value, 'f', 2);
}

QString percent(double share) {
    return QLocale().toString(share * 100, 'f', 0) + QStringLiteral(" %");
}

// The rank's measured bubble: its idle share of its steps' work (the timeline's hatching).
void addBubble(LessonFacts& f, const replay::ReplayModel& model, int rank) {
    const auto info = model.info();
    if (!info || info->pipeParallel <= 1 || rank < 0 || rank >= model.worldSize()) return;
    replay::TimelineIndex index;
    index.update(model);
    if (const auto idle = index.lane(rank).idleFraction())
        f[QStringLiteral("bubble")] = percent(*idle);
}

void addInfo(LessonFacts& f, const replay::RunInfo& info) {
    f[QStringLiteral("psi")] = QLocale().toString(static_cast<qulonglong>(info.paramCount));
    f[QStringLiteral("n")] = QString::number(info.worldSize);
    f[QStringLiteral("model")] = QString::fromStdString(info.model);
    if (const auto s = strategyFromName(info.strategy))
        f[QStringLiteral("strategy")] = strategyLabel(*s);
    f[QStringLiteral("units")] = QString::number(info.units.size());
    f[QStringLiteral("steps_before")] = QString::number(info.stepsBefore);
    // The P × T × D mesh: pipeline stages, TP ranks per block, data-parallel ranks per stage.
    const int t = std::max(info.tensorParallel, 1), pp = std::max(info.pipeParallel, 1);
    f[QStringLiteral("tp")] = QString::number(t);
    f[QStringLiteral("pp")] = QString::number(pp);
    f[QStringLiteral("dp")] = QString::number(info.worldSize / (t * pp));
    f[QStringLiteral("micro_batches")] = QString::number(info.gradAccum);
    if (const auto s = plan::pipeScheduleFromFlag(info.pipeSchedule); s && pp > 1) {
        try {
            f[QStringLiteral("bubble_theory")] =
                percent(theory::pipeBubble(*s, {pp, info.gradAccum, info.virtualStages}, {}));
        } catch (const std::exception&) {
            // a shape its schedule cannot run: the paragraph that quotes it says what is missing
        }
    }
    if (info.capacityBytes)
        f[QStringLiteral("capacity")] = formatDecimal(static_cast<double>(*info.capacityBytes));
    const auto largest = std::max_element(
        info.units.begin(), info.units.end(),
        [](const report::UnitInfo& a, const report::UnitInfo& b) { return a.params < b.params; });
    if (largest != info.units.end()) {
        f[QStringLiteral("largest_unit")] = QString::fromStdString(largest->name);
        f[QStringLiteral("largest_unit_params")] =
            QLocale().toString(static_cast<qulonglong>(largest->params));
        f[QStringLiteral("largest_unit_bf16")] =
            formatDecimal(2.0 * static_cast<double>(largest->padded));
    }
}

} // namespace

void addReportFacts(LessonFacts& f, const report::RunReport& r, int rank, const QString& p) {
    if (rank < 0 || static_cast<std::size_t>(rank) >= r.ranks.size() || r.paramCount == 0) return;
    const report::RankReport& me = r.ranks[static_cast<std::size_t>(rank)];
    const double psi = static_cast<double>(r.paramCount);
    f[p + QStringLiteral("psi")] = QLocale().toString(static_cast<qulonglong>(r.paramCount));
    f[p + QStringLiteral("n")] = QString::number(r.worldSize);
    std::uint64_t params = 0, grads = 0, optimizer = 0;
    for (const Category c : kAllCategories) {
        const auto i = static_cast<std::size_t>(c);
        const std::string_view name = categoryName(c);
        f[p + key("peak.", name)] = formatDecimal(static_cast<double>(me.peakBytes[i]));
        f[p + key("at_peak.", name)] = formatDecimal(static_cast<double>(r.theory.peakAt[i]));
        const StateGroup group = stateGroup(c);
        if (group == StateGroup::Other) continue;
        f[p + key("state.", name)] = formatDecimal(static_cast<double>(me.modelStateBytes[i]));
        f[p + key("bpp.", name)] = ratio(static_cast<double>(me.modelStateBytes[i]) / psi);
        (group == StateGroup::Param  ? params
         : group == StateGroup::Grad ? grads
                                     : optimizer) += me.modelStateBytes[i];
    }
    const std::uint64_t total = report::stateTotal(me.modelStateBytes);
    const std::uint64_t ddp = report::stateTotal(r.theory.ddpModelStateBytes);
    f[p + QStringLiteral("state.params")] = formatDecimal(static_cast<double>(params));
    f[p + QStringLiteral("state.grads")] = formatDecimal(static_cast<double>(grads));
    f[p + QStringLiteral("state.optimizer")] = formatDecimal(static_cast<double>(optimizer));
    f[p + QStringLiteral("bpp.params")] = ratio(static_cast<double>(params) / psi);
    f[p + QStringLiteral("bpp.grads")] = ratio(static_cast<double>(grads) / psi);
    f[p + QStringLiteral("bpp.optimizer")] = ratio(static_cast<double>(optimizer) / psi);
    f[p + QStringLiteral("state_total")] = formatDecimal(static_cast<double>(total));
    f[p + QStringLiteral("bpp_total")] = ratio(static_cast<double>(total) / psi);
    f[p + QStringLiteral("theory_total")] =
        formatDecimal(static_cast<double>(report::stateTotal(r.theory.modelStateBytes)));
    f[p + QStringLiteral("states_equal")] =
        r.comparison.modelStatesEqual
            ? QCoreApplication::translate("LessonFacts", "equal, byte for byte")
            : QCoreApplication::translate("LessonFacts", "not equal");
    f[p + QStringLiteral("padding")] = formatDecimal(static_cast<double>(r.theory.paddingBytes));
    f[p + QStringLiteral("ddp_total")] = formatDecimal(static_cast<double>(ddp));
    f[p + QStringLiteral("bpp_ddp")] = ratio(static_cast<double>(ddp) / psi);
    if (total > 0)
        // Three decimals: padding keeps a saving just under N (3.996×), which two would round
        // to N and contradict.
        f[p + QStringLiteral("saving")] =
            QLocale().toString(static_cast<double>(ddp) / static_cast<double>(total), 'f', 3) +
            QStringLiteral("×");
    f[p + QStringLiteral("peak")] = formatDecimal(static_cast<double>(me.peakTotal));
    if (r.resumedFrom) { // the checkpoint a resumed run started from
        f[p + QStringLiteral("resumed.step")] = QString::number(r.resumedFrom->step);
        f[p + QStringLiteral("resumed.n")] = QString::number(r.resumedFrom->worldSize);
        if (const auto s = strategyFromName(r.resumedFrom->strategy))
            f[p + QStringLiteral("resumed.strategy")] = strategyLabel(*s);
    }
    f[p + QStringLiteral("predicted_peak")] =
        formatDecimal(static_cast<double>(r.theory.predictedPeakBytes));
    f[p + QStringLiteral("peak_phase")] = peakPhaseLabel(r.theory.peakPhase);
    f[p + QStringLiteral("beyond_states")] =
        formatDecimal(static_cast<double>(me.peakTotal > total ? me.peakTotal - total : 0));
    if (total > 0)
        f[p + QStringLiteral("peak_over_states")] =
            ratio(static_cast<double>(me.peakTotal) / static_cast<double>(total)) +
            QStringLiteral("×");
    f[p + QStringLiteral("activation_theory")] =
        formatDecimal(static_cast<double>(r.theory.activationPeakBytes));
    f[p + QStringLiteral("comm_step")] = formatDecimal(report::total(me.commBytesPerStep));
    f[p + QStringLiteral("comm_psi")] = ratio(r.theory.psiEquivalents);
    for (const auto& [kind, bytes] : me.commBytesPerStep)
        f[p + key("comm.", kind)] = formatDecimal(bytes);
    if (!r.losses.empty())
        f[p + QStringLiteral("loss_last")] = QLocale().toString(r.losses.back(), 'f', 4);
    for (const Tier t :
         kAllTiers) { // where the bytes live: device, host (ZeRO-Offload), nvme (ZeRO-Infinity)
        const auto i = static_cast<std::size_t>(t);
        f[p + key("tier_peak.", tierName(t))] =
            formatDecimal(static_cast<double>(me.peakTotalByTier[i]));
        f[p + key("tier_states.", tierName(t))] =
            formatDecimal(static_cast<double>(report::stateTotal(me.modelStateBytesByTier[i])));
        f[p + key("tier_theory.", tierName(t))] = formatDecimal(
            static_cast<double>(report::stateTotal(r.theory.modelStateBytesByTier[i])));
    }
}

namespace {

void addPlayhead(LessonFacts& f, RunDocument& document, int rank) {
    const replay::ReplayModel& model = document.model();
    const replay::ReplayCursor& cursor = document.player().cursor();
    const std::uint64_t k = cursor.index();
    f[QStringLiteral("event_index")] = QString::number(k);
    f[QStringLiteral("event_count")] = QString::number(model.eventCount());
    if (model.stepCount() > 0) f[QStringLiteral("steps")] = QString::number(model.stepCount());
    if (rank >= 0 && static_cast<std::size_t>(rank) < cursor.state().size()) {
        const replay::RankState& s = cursor.state()[static_cast<std::size_t>(rank)];
        f[QStringLiteral("live.total")] = formatDecimal(static_cast<double>(s.liveTotal));
        for (const Category c : kAllCategories)
            f[key("live.", categoryName(c))] =
                formatDecimal(static_cast<double>(s.live.category(c)));
        QStringList gathered;
        for (std::size_t u = 0; u < replay::kTrackedUnits; ++u)
            if (s.isGathered(static_cast<std::int32_t>(u)) && model.info())
                gathered << QString::fromStdString(
                    model.info()->unitName(static_cast<std::int32_t>(u)));
        f[QStringLiteral("gathered")] = gathered.isEmpty()
                                            ? QCoreApplication::translate("LessonFacts", "none")
                                            : gathered.join(QStringLiteral(", "));
    }
    if (k == 0 || k > model.eventCount() || !model.info()) return;
    // The event the explain panel describes for this rank: its last one the playhead applied.
    const auto at = Explain::eventForRank(model, k, rank);
    if (!at) return;
    const Event& e = model.event(*at);
    f[QStringLiteral("ev.step")] = QString::number(
        displayStep(static_cast<std::int64_t>(model.stepIndexOf(*at)), model.info()->stepsBefore));
    f[QStringLiteral("ev.rank")] = QString::number(e.rank);
    f[QStringLiteral("ev.unit")] = e.unit == kNoUnit
                                       ? QCoreApplication::translate("LessonFacts", "no unit")
                                       : QString::fromStdString(model.info()->unitName(e.unit));
    f[QStringLiteral("ev.bytes")] = formatDecimal(static_cast<double>(e.bytes));
    f[QStringLiteral("ev.phase")] = phaseLabel(e.phase);
    f[QStringLiteral("ev.collective")] = collectiveLabel(e.collective);
    f[QStringLiteral("ev.peers")] = QString::number(e.peers);
}

bool matches(const Event& e, const lessons::Seek& s, const replay::RunInfo* info) {
    if (e.rank != s.rank) return false;
    if (s.kind && e.kind != *s.kind) return false;
    if (s.collective && e.collective != *s.collective) return false;
    if (s.phase && e.phase != *s.phase) return false;
    if (s.category && e.category != *s.category) return false;
    if (s.transfer && e.transfer != *s.transfer) return false;
    if (!s.unit.empty() && (!info || e.unit == kNoUnit || info->unitName(e.unit) != s.unit))
        return false;
    return true;
}

} // namespace

LessonFacts lessonFacts(RunDocument& document, int rank) {
    LessonFacts f;
    if (const auto& info = document.model().info()) addInfo(f, *info);
    if (const auto& r = document.report()) addReportFacts(f, *r, rank, QString());
    addPlayhead(f, document, rank);
    addBubble(f, document.model(), rank);
    return f;
}

QString fillPlaceholders(const QString& text, const LessonFacts& facts, QStringList* missing) {
    static const QRegularExpression placeholder(QStringLiteral("\\{([a-z0-9_.]+)\\}"));
    QString out;
    qsizetype from = 0;
    for (auto it = placeholder.globalMatch(text); it.hasNext();) {
        const QRegularExpressionMatch m = it.next();
        out += text.mid(from, m.capturedStart() - from);
        const auto found = facts.constFind(m.captured(1));
        if (found != facts.constEnd())
            out += found.value();
        else {
            out += m.captured(0);
            if (missing) missing->append(m.captured(1));
        }
        from = m.capturedEnd();
    }
    return out + text.mid(from);
}

std::optional<std::uint64_t> seekIndex(const replay::ReplayModel& model, const lessons::Seek& seek,
                                       QString* why) {
    if (model.stepCount() == 0) {
        *why = QCoreApplication::translate("LessonFacts", "the run has no steps");
        return std::nullopt;
    }
    if (seek.step > static_cast<std::int64_t>(model.stepCount())) {
        *why = QCoreApplication::translate("LessonFacts",
                                           "the run has %1 steps, the lesson asks for step %2")
                   .arg(model.stepCount())
                   .arg(seek.step);
        return std::nullopt;
    }
    const replay::StepData& step = model.step(
        seek.step == 0 ? model.stepCount() - 1 : static_cast<std::size_t>(seek.step - 1));
    switch (seek.at) {
    case lessons::Seek::At::Start:
        return step.firstEvent;
    case lessons::Seek::At::Peak: {
        // The focus rank's own peak in this step (step.peakEvent is the busiest rank's), so the
        // ledger the paragraph quotes at the playhead is that rank's peak.
        if (seek.rank >= model.worldSize()) {
            *why = QCoreApplication::translate("LessonFacts",
                                               "the run has %1 ranks, the lesson asks for rank %2")
                       .arg(model.worldSize())
                       .arg(seek.rank);
            return std::nullopt;
        }
        replay::ReplayCursor cursor(model);
        cursor.moveTo(step.firstEvent);
        std::uint64_t best = step.firstEvent;
        std::uint64_t bestBytes = cursor.state()[static_cast<std::size_t>(seek.rank)].liveTotal;
        for (std::uint64_t k = step.firstEvent + 1; k <= step.endEvent(); ++k) {
            cursor.moveTo(k);
            const std::uint64_t bytes =
                cursor.state()[static_cast<std::size_t>(seek.rank)].liveTotal;
            if (bytes > bestBytes) {
                best = k;
                bestBytes = bytes;
            }
        }
        return best;
    }
    case lessons::Seek::At::End:
        return step.endEvent();
    case lessons::Seek::At::Event:
        break;
    }
    int seen = 0;
    for (std::size_t i = 0; i < step.events.size(); ++i)
        if (matches(step.events[i], seek, model.info().get()) && ++seen == seek.nth)
            return step.firstEvent + i + 1;
    *why =
        QCoreApplication::translate("LessonFacts", "no event of step %1 matches the lesson's seek")
            .arg(step.step + 1);
    return std::nullopt;
}

} // namespace shardscope::widgets
