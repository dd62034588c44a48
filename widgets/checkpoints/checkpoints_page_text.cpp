// The Checkpoints page's tables, summary, explanation and translated texts.
#include "checkpoints/checkpoints_page.h"
#include "common/byte_format.h"
#include "common/category_palette.h"
#include "common/theory_names.h"
#include "playback/explain_text.h"
#include "playback/glossary_terms.h"
#include "runconfig/presets.h"

#include <QAction>
#include <QComboBox>
#include <QFileInfo>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QTabWidget>
#include <QTreeWidget>

namespace shardscope::widgets {
namespace {

QString q(const std::string& s) {
    return QString::fromStdString(s);
}
QString num(std::uint64_t v) {
    return formatBytesExact(v);
}

} // namespace

void CheckpointsPage::fillReads() {
    reads_->clear();
    if (!plan_ || !meta_) return;
    const LoadPlan& p = *plan_;
    std::vector<QTreeWidgetItem*> rankItems;
    for (int r = 0; r < p.newWorld; ++r) {
        const RankLoad& load = p.ranks[static_cast<std::size_t>(r)];
        auto* item = new QTreeWidgetItem(reads_);
        item->setText(0, tr("New rank %1").arg(r));
        item->setText(2, tr("%n read(s) from %1 file(s)", nullptr, static_cast<int>(load.reads))
                             .arg(load.files));
        item->setText(3, tr("%1 read (whole checksum chunks)")
                             .arg(formatDecimal(static_cast<double>(load.bytesRead))));
        item->setText(4, formatDecimal(static_cast<double>(load.bytesNeeded)));
        item->setToolTip(4, tr("%1 bytes of this rank's shard (master, Adam m, Adam v); %2 bytes "
                               "read, since a checksum chunk is read whole to check it")
                                .arg(num(load.bytesNeeded), num(load.bytesRead)));
        item->setForeground(0, rankColor(r, p.newWorld).darker(130));
        rankItems.push_back(item);
    }
    for (const UnitLoadPlan& u : p.units)
        for (const PlannedRead& pr : u.reads) {
            const checkpoint::Read& r = pr.read;
            const std::uint64_t len = (r.end - r.begin) * sizeof(float);
            auto* item = new QTreeWidgetItem(rankItems[static_cast<std::size_t>(pr.newRank)]);
            item->setText(0, q(meta_->files[r.file].name));
            item->setText(1, q(u.name));
            item->setText(2, QStringLiteral("[%1, %2)").arg(num(r.begin), num(r.end)));
            item->setText(3, tr("%1–%2 · %3–%4 · %5–%6")
                                 .arg(num(r.offsets[0]), num(r.offsets[0] + len), num(r.offsets[1]),
                                      num(r.offsets[1] + len), num(r.offsets[2]),
                                      num(r.offsets[2] + len)));
            item->setText(4, formatDecimal(static_cast<double>(r.bytes())));
        }
    reads_->expandToDepth(0);
    for (int c = 0; c < 4; ++c)
        reads_->resizeColumnToContents(c);
}

static QString fileStateText(const checkpoint::FileCheck& c) {
    QString s;
    switch (c.state) {
    case checkpoint::FileCheck::State::Ok:
        return CheckpointsPage::tr("OK");
    case checkpoint::FileCheck::State::Missing:
        s = CheckpointsPage::tr("missing");
        break;
    case checkpoint::FileCheck::State::WrongSize:
        s = CheckpointsPage::tr("wrong size");
        break;
    case checkpoint::FileCheck::State::BadChecksum:
        s = CheckpointsPage::tr("checksum mismatch");
        break;
    case checkpoint::FileCheck::State::Unreadable:
        s = CheckpointsPage::tr("unreadable");
        break;
    }
    // The problem may begin with the state's English name: shown once, in this language.
    const std::string detail(checkpoint::problemDetail(c));
    if (detail.empty()) return s;
    return s + (detail.front() == '(' ? QStringLiteral(" ") : QStringLiteral(": ")) + q(detail);
}

void CheckpointsPage::fillFiles() {
    files_->clear();
    if (!meta_) return;
    for (std::size_t i = 0; i < meta_->files.size(); ++i) {
        const checkpoint::DataFile& f = meta_->files[i];
        auto* item = new QTreeWidgetItem(files_);
        item->setText(0, q(f.name));
        item->setText(1, QString::number(f.rank));
        item->setText(2, formatDecimal(static_cast<double>(f.bytes)));
        item->setToolTip(2, tr("%1 bytes").arg(num(f.bytes)));
        item->setForeground(1, rankColor(f.rank, meta_->worldSize).darker(130));
        QString state;
        if (verifying_)
            state = tr("verifying…");
        else if (!verifyError_.isEmpty())
            state = tr("not verified: %1").arg(verifyError_);
        else if (i < checks_.size())
            state = fileStateText(checks_[i]);
        item->setText(3, state);
        item->setToolTip(3, state);
        if (!verifying_ &&
            (!verifyError_.isEmpty() ||
             (i < checks_.size() && checks_[i].state != checkpoint::FileCheck::State::Ok)))
            item->setForeground(3, alertColor());
    }
    for (int c = 0; c < 3; ++c)
        files_->resizeColumnToContents(c);
}

QStringList CheckpointsPage::verificationTexts() const {
    QStringList out;
    for (int i = 0; i < files_->topLevelItemCount(); ++i)
        out << files_->topLevelItem(i)->text(3);
    return out;
}

QString CheckpointsPage::explanation() const {
    if (!plan_ || plan_->units.empty()) return {};
    const LoadPlan& p = *plan_;
    // The example unit: the first whose padding differs between N and M, else the first.
    const UnitLoadPlan* u = &p.units.front();
    for (const UnitLoadPlan& x : p.units)
        if (x.paddedSaved - x.elements != x.paddedNew - x.elements) {
            u = &x;
            break;
        }
    const RankLoad& r0 = p.ranks.front();
    const auto entries = Glossary::entries();
    return QStringLiteral("<p>%1</p><p>%2</p>")
        .arg(Glossary::linkTerms(Explain::checkpointPadding(q(u->name), u->elements, p.savedWorld,
                                                            u->paddedSaved - u->elements,
                                                            p.newWorld, u->paddedNew - u->elements),
                                 entries),
             Glossary::linkTerms(Explain::reshardingAtLoad(p.savedWorld, p.newWorld, 0, r0.reads,
                                                           r0.files, r0.bytesNeeded),
                                 entries));
}

void CheckpointsPage::updateSummary() {
    QString text;
    if (meta_) {
        const checkpoint::Metadata& m = *meta_;
        const auto s = plan::parseStrategy(m.strategy);
        const QString strategy = s ? strategyLabel(*s) : q(m.strategy);
        text = tr("Step %1, saved by %2 on N = %3 ranks: %4 parameters, %5 files, %6.")
                   .arg(m.step)
                   .arg(strategy)
                   .arg(m.worldSize)
                   .arg(formatCount(static_cast<double>(m.paramCount)))
                   .arg(m.files.size())
                   .arg(formatDecimal(
                       static_cast<double>(m.paramCount * checkpoint::kBytesPerElement)));
        if (m.pipeParallel > 1)
            text += QLatin1Char(' ') +
                    tr("A pipeline of %1 stages saved it: each stage's %2 ranks shared its units.")
                        .arg(m.pipeParallel)
                        .arg(m.worldSize / m.pipeParallel);
        if (!verifying_ && verifyError_.isEmpty() && !checks_.empty()) {
            const auto bad =
                std::count_if(checks_.begin(), checks_.end(), [](const checkpoint::FileCheck& c) {
                    return c.state != checkpoint::FileCheck::State::Ok;
                });
            text += QLatin1Char(' ') +
                    (bad == 0 ? tr("Every file verified.")
                              : tr("%n file(s) damaged: a resumed run would refuse it.", nullptr,
                                   static_cast<int>(bad)));
        } else if (verifying_) {
            text += QLatin1Char(' ') + tr("Verifying the files…");
        }
    }
    summary_->setText(text);
    explain_->setText(explanation());
    const auto choice = resumeChoice();
    resume_->setEnabled(choice.has_value());
    QString note;
    if (meta_ && plan_ && !choice)
        note = tr("No model preset of the run settings has this checkpoint's shape.");
    else if (choice)
        note = tr("Fills the Ranks page's run settings: %1 on %2 ranks, resuming from %3.")
                   .arg(strategyLabel(choice->strategy))
                   .arg(choice->ranks)
                   .arg(choice->path);
    resumeNote_->setText(note);
    resumeNote_->setVisible(!note.isEmpty());
    if (plan_)
        legend_->setText(tr("Each unit: the saved files' ranges (rank colours of N = %1), the "
                            "reads of each new rank (coloured by "
                            "the file they come from), the new shards (rank colours of M = %2); "
                            "hatched: padding. Hover for bytes.")
                             .arg(plan_->savedWorld)
                             .arg(plan_->newWorld));
    else
        legend_->setText(
            meta_ || !error_.isEmpty()
                ? QString()
                : tr("Open a checkpoint folder (File → Open checkpoint…) to see how it reshards."));
}

void CheckpointsPage::updateStepNames() {
    for (int i = 0; i < step_->count(); ++i) {
        const QString name = QFileInfo(step_->itemData(i).toString()).fileName();
        step_->setItemText(i, name == latest_ ? tr("%1 (latest)").arg(name) : name);
    }
}

void CheckpointsPage::retranslateUi() {
    openAction_->setText(tr("Open checkpoint…"));
    openButton_->setText(tr("Open checkpoint folder…"));
    if (root_.isEmpty()) pathLabel_->setText(tr("No checkpoint open."));
    stepLabel_->setText(tr("Step"));
    ranksLabel_->setText(tr("Load on M ranks"));
    strategyLabel_->setText(tr("Strategy"));
    hybridLabel_->setText(tr("Hybrid group (ranks)"));
    for (int i = 0; i < strategy_->count(); ++i)
        strategy_->setItemText(
            i, strategyLabel(static_cast<plan::Strategy>(strategy_->itemData(i).toInt())));
    resume_->setText(tr("Resume a run from here"));
    resume_->setToolTip(tr("Fill the run settings on the Ranks page: this step, M ranks and the "
                           "strategy chosen here."));
    reads_->setHeaderLabels({tr("New rank / file"), tr("Unit"), tr("Elements"),
                             tr("Bytes in the file (master · Adam m · Adam v)"), tr("Bytes")});
    files_->setHeaderLabels({tr("File"), tr("Saved by rank"), tr("Size"), tr("Verification")});
    tabs_->setTabText(0, tr("Reads per new rank"));
    tabs_->setTabText(1, tr("Files"));
    updateStepNames();
    fillReads();
    fillFiles();
    updateSummary();
}

} // namespace shardscope::widgets
