#include "app/recording_files.h"

#include "app/main_window.h"
#include "common/chart_export.h"
#include "common/qcustomplot.h"
#include "compare/compare_page.h"
#include "playback/replay_page.h"
#include "protocol/protocol.h"
#include "report/report.h"
#include "run/run_document.h"

#include <QAction>
#include <QEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QMenu>
#include <QMessageBox>
#include <QSaveFile>
#include <QSettings>
#include <QStackedWidget>

namespace shardscope::widgets {
namespace {
const QString kRecentKey = QStringLiteral("recent/recordings");
}

std::string encodeRecording(const replay::ReplayModel& m, const std::string& reportJson,
                            const std::vector<replay::FailureInfo>& failures) {
    std::string out;
    protocol::writeHeader(out);
    const int n = m.worldSize();
    const std::string config = m.info() ? m.info()->configJson : std::string("{}");
    for (int r = 0; r < n; ++r)
        protocol::writeRecord(out, protocol::Handshake{r, n, config});
    std::vector<std::vector<Event>> perRank(static_cast<std::size_t>(n));
    for (const replay::StepPtr& s : m.steps()) {
        for (auto& v : perRank)
            v.clear();
        for (const Event& e : s->events)
            if (e.rank >= 0 && e.rank < n) perRank[static_cast<std::size_t>(e.rank)].push_back(e);
        for (int r = 0; r < n; ++r)
            if (!perRank[static_cast<std::size_t>(r)].empty())
                protocol::writeRecord(
                    out, protocol::EventBatch{r, perRank[static_cast<std::size_t>(r)]});
        // A step cut short by a failure has no summary, as in the original stream.
        if (s->complete)
            protocol::writeRecord(out, protocol::StepSummary{s->step, s->loss, s->stepNs});
    }
    if (!reportJson.empty()) protocol::writeRecord(out, protocol::Report{reportJson});
    for (const replay::FailureInfo& f : failures)
        protocol::writeRecord(out, protocol::Failure{f.rank, f.step, f.message});
    protocol::writeRecord(out, protocol::End{});
    return out;
}

RecordingFiles::RecordingFiles(MainWindow& window, RunDocument& document)
    : QObject(&window), window_(window), document_(document) {
    save_ = new QAction(this);
    save_->setShortcut(QKeySequence::SaveAs);
    connect(save_, &QAction::triggered, this, [this] {
        const QString path = QFileDialog::getSaveFileName(&window_, tr("Save recording"), QString(),
                                                          tr("ShardScope recordings (*.sstrace)"));
        if (path.isEmpty()) return;
        QString error;
        if (!saveRecording(path, &error))
            QMessageBox::warning(&window_, tr("Save recording"), error);
        else
            addRecent(path);
    });
    export_ = new QAction(this);
    export_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_E));
    connect(export_, &QAction::triggered, this, [this] {
        const QString path = QFileDialog::getSaveFileName(&window_, tr("Export current view"),
                                                          QString(), ChartExport::fileFilter());
        if (path.isEmpty()) return;
        QString error;
        if (!exportCurrentView(path, &error)) QMessageBox::warning(&window_, tr("Export"), error);
    });
    recent_ = new QMenu(&window_);
    window_.addFileAction(recent_->menuAction());
    window_.addFileAction(save_);
    window_.addFileAction(export_);
    RunSession& session = document_.session();
    // The session learns the file's path after `started`; a readable header means it is one.
    connect(&session, &RunSession::runInfoReady, this, [this] {
        if (!document_.session().isLive() && !document_.session().recordingPath().isEmpty())
            addRecent(document_.session().recordingPath());
    });
    window_.installEventFilter(this); // LanguageChange of the window: retranslate the actions
    retranslateUi();
    rebuildRecentMenu();
}

bool RecordingFiles::saveRecording(const QString& path, QString* error) const {
    if (document_.model().stepCount() == 0) {
        if (error) *error = tr("nothing to save: run a job or open a recording first");
        return false;
    }
    // The report goes back through the one writer: the typed value is all the replay keeps.
    const std::string bytes = encodeRecording(
        document_.model(),
        document_.report() ? report::toJson(*document_.report()).dump() : std::string(),
        document_.failures());
    if (const QString problem = ChartExport::outputProblem(path); !problem.isEmpty()) {
        if (error) *error = problem;
        return false;
    }
    QSaveFile f(path);
    if (!f.open(QIODevice::WriteOnly) ||
        f.write(bytes.data(), static_cast<qint64>(bytes.size())) !=
            static_cast<qint64>(bytes.size()) ||
        !f.commit()) {
        if (error) *error = tr("cannot write %1: %2").arg(path, f.errorString());
        return false;
    }
    return true;
}

QWidget* RecordingFiles::currentExportTarget() const {
    QWidget* page = window_.currentPage();
    if (!page) return nullptr;
    if (auto* replay = qobject_cast<ReplayPageBase*>(page)) return replay->exportTarget();
    if (auto* compare = qobject_cast<ComparePage*>(page)) return compare->exportTarget();
    // Other pages: the chart with focus, else the first visible chart, else the page.
    const auto plots = page->findChildren<QCustomPlot*>();
    for (QCustomPlot* p : plots)
        if (p->hasFocus()) return p;
    for (QCustomPlot* p : plots)
        if (p->isVisible()) return p;
    return page;
}

bool RecordingFiles::exportCurrentView(const QString& path, QString* error) const {
    QWidget* target = currentExportTarget();
    if (!target) {
        if (error) *error = tr("no page to export");
        return false;
    }
    return ChartExport::exportWidget(*target, path, error);
}

QStringList RecordingFiles::recentFiles() const {
    return QSettings().value(kRecentKey).toStringList();
}

void RecordingFiles::addRecent(const QString& path) {
    const QString abs = QFileInfo(path).absoluteFilePath();
    QStringList list = recentFiles();
    list.removeAll(abs);
    list.prepend(abs);
    while (list.size() > kMaxRecent)
        list.removeLast();
    QSettings().setValue(kRecentKey, list);
    rebuildRecentMenu();
}

void RecordingFiles::rebuildRecentMenu() {
    recent_->clear();
    const QStringList list = recentFiles();
    for (const QString& path : list) {
        QAction* a = recent_->addAction(QFileInfo(path).fileName());
        a->setToolTip(path);
        connect(a, &QAction::triggered, this, [this, path] {
            window_.showPage(QStringLiteral("ranks"));
            if (!document_.session().isActive()) document_.session().openRecording(path);
        });
    }
    recent_->setEnabled(!list.isEmpty());
}

bool RecordingFiles::eventFilter(QObject* watched, QEvent* event) {
    if (watched == &window_ && event->type() == QEvent::LanguageChange) retranslateUi();
    return QObject::eventFilter(watched, event);
}

void RecordingFiles::retranslateUi() {
    recent_->setTitle(tr("Open &recent"));
    save_->setText(tr("&Save recording as…"));
    save_->setToolTip(tr("Write the run shown (live or opened) as a .sstrace recording"));
    export_->setText(tr("&Export current view…"));
    export_->setToolTip(tr("Save the current chart or view as PNG, SVG or PDF"));
}

} // namespace shardscope::widgets
