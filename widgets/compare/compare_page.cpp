#include "compare/compare_page.h"

#include "common/flow_layout.h"
#include "common/palette_legend.h"
#include "common/qcustomplot.h"
#include "common/side_column.h"
#include "compare/compare_runner.h"
#include "compare/compare_view.h"
#include "core/error.h"
#include "plan/strategy.h"

#include <QEvent>
#include <QFile>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QPushButton>
#include <QShortcut>
#include <QVBoxLayout>
#include <algorithm>

namespace shardscope::widgets {

ComparePage::ComparePage(QWidget* parent)
    : QWidget(parent), view_(new CompareView(this)), runner_(new CompareRunner(this)) {
    runner_->setObjectName(QStringLiteral("compareRunner"));
    // On a projector the comparison shows; "Run all strategies" is a key away (F5), and a run
    // started before keeps going while put away.
    putAwayWhilePresenting(runner_);
    connect(runner_, &CompareRunner::finished, this, &ComparePage::showComparison);
    connect(runner_, &CompareRunner::statusMessage, this, &ComparePage::statusMessage);
    // Escape cancels "Run all strategies" while this page is showing.
    auto* escape = new QShortcut(QKeySequence(Qt::Key_Escape), this);
    escape->setObjectName(QStringLiteral("compareStopShortcut"));
    connect(escape, &QShortcut::activated, runner_, &CompareRunner::stop);
    open_ = new QPushButton(this);
    addCurrent_ = new QPushButton(this);
    addCurrent_->setObjectName(QStringLiteral("compareAddCurrent"));
    addCurrent_->setEnabled(false);
    clear_ = new QPushButton(this);
    connect(open_, &QPushButton::clicked, this, &ComparePage::chooseFiles);
    connect(addCurrent_, &QPushButton::clicked, this, [this] {
        if (current_) addReport(*current_);
    });
    connect(clear_, &QPushButton::clicked, this, &ComparePage::clear);
    auto* buttonRow = new QWidget(this); // put away in presentation mode (F5 brings it back)
    putAwayWhilePresenting(buttonRow);
    auto* buttons = new FlowLayout(buttonRow, 6, 4);
    buttons->setContentsMargins(0, 0, 0, 0);
    buttons->addWidget(open_);
    buttons->addWidget(addCurrent_);
    buttons->addWidget(clear_);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addWidget(runner_);
    layout->addWidget(buttonRow);
    layout->addWidget(view_, 1);
    auto* legend =
        new PaletteLegend({ColorFamily::Memory, ColorFamily::Activities, ColorFamily::Ranks}, this);
    putAwayWhilePresenting(legend); // the charts' own legends name every colour
    layout->addWidget(legend);
    retranslateUi();
}

// Same strategy on the same mesh of the same configuration (replay::comparable): the newer
// report wins; a run of another configuration joins as its own group. Order: the configurations as
// they first arrived, inside each DDP, ZeRO-1…3, FSDP variants (the theory's).
void ComparePage::merge(std::vector<report::RunReport> runs) {
    std::vector<report::RunReport> all = view_->runs();
    for (report::RunReport& r : runs) {
        const auto same = std::find_if(all.begin(), all.end(), [&r](const report::RunReport& o) {
            return o.strategy == r.strategy && replay::meshOf(o) == replay::meshOf(r) &&
                   replay::comparable(o, r);
        });
        if (same != all.end())
            *same = std::move(r);
        else
            all.push_back(std::move(r));
    }
    const auto rank = [](const report::RunReport& r) {
        const auto s = plan::parseStrategy(r.strategy);
        return s ? static_cast<int>(*s) : 100;
    };
    std::vector<report::RunReport> ordered;
    ordered.reserve(all.size());
    for (std::vector<std::size_t> group : replay::configurationGroups(all)) {
        std::stable_sort(group.begin(), group.end(),
                         [&](std::size_t a, std::size_t b) { return rank(all[a]) < rank(all[b]); });
        for (std::size_t i : group)
            ordered.push_back(std::move(all[i]));
    }
    view_->setRuns(std::move(ordered));
}

void ComparePage::addReport(const report::RunReport& report) {
    merge({report});
}

void ComparePage::setCurrentReport(std::shared_ptr<const report::RunReport> report) {
    current_ = std::move(report);
    addCurrent_->setEnabled(current_ != nullptr);
}

bool ComparePage::openFiles(const QStringList& paths, QString* error) {
    std::vector<report::RunReport> runs;
    for (const QString& path : paths) {
        QFile f(path);
        if (!f.open(QIODevice::ReadOnly)) {
            if (error) *error = tr("cannot read %1: %2").arg(path, f.errorString());
            return false;
        }
        try {
            for (report::RunReport& r : replay::parseCompareRuns(f.readAll().toStdString()))
                runs.push_back(std::move(r));
        } catch (const Error& e) {
            if (error) *error = tr("%1: %2").arg(path, QString::fromUtf8(e.what()));
            return false;
        }
    }
    merge(std::move(runs));
    return true;
}

void ComparePage::clear() {
    view_->setRuns({});
}

// A fresh comparison replaces what was shown: its runs share one model, N and seed, and mixing
// them with older runs of another configuration would make the parity badges meaningless.
void ComparePage::showComparison(const QByteArray& json) {
    try {
        std::vector<report::RunReport> runs = replay::parseCompareRuns(json.toStdString());
        view_->setRuns({});
        merge(std::move(runs));
        Q_EMIT statusMessage(tr("Comparison finished: %n strategies", nullptr,
                                static_cast<int>(view_->runs().size())));
    } catch (const Error& e) {
        Q_EMIT statusMessage(QString::fromUtf8(e.what()));
    }
}

QWidget* ComparePage::exportTarget() const {
    // The chart the user last clicked into, else the ledgers.
    for (QCustomPlot* plot : {view_->ledgerPlot(), view_->peakPlot(), view_->commPlot()})
        if (plot->hasFocus()) return plot;
    return view_->ledgerPlot();
}

void ComparePage::chooseFiles() {
    const QStringList paths = QFileDialog::getOpenFileNames(
        this, tr("Open run or compare reports"), QString(), tr("Reports (*.json);;All files (*)"));
    if (paths.isEmpty()) return;
    QString error;
    if (!openFiles(paths, &error)) Q_EMIT statusMessage(error);
}

void ComparePage::changeEvent(QEvent* event) {
    if (event->type() == QEvent::LanguageChange) retranslateUi();
    QWidget::changeEvent(event);
}

void ComparePage::retranslateUi() {
    open_->setText(tr("Open reports…"));
    open_->setToolTip(tr(
        "Add runs from JSON reports: shardscope-cli run --json, or shardscope-cli compare --json"));
    addCurrent_->setText(tr("Add the Ranks page's run"));
    addCurrent_->setToolTip(tr("Put the run or recording the Ranks page shows beside these runs"));
    clear_->setText(tr("Clear"));
    clear_->setToolTip(tr("Remove every run from the comparison"));
}

} // namespace shardscope::widgets
