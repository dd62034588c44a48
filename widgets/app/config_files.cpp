#include "app/config_files.h"

#include "app/main_window.h"
#include "config_import/accelerate.h"
#include "config_import/ds_config.h"
#include "config_import/import.h"
#include "core/error.h"
#include "run/run_config_panel.h"
#include "run/run_document.h"
#include "run/run_request.h"
#include "trace_export/exports.h"

#include <QAction>
#include <QDialog>
#include <QDialogButtonBox>
#include <QEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QVBoxLayout>

namespace shardscope::widgets {

ConfigFiles::ConfigFiles(MainWindow& window, RunDocument& document, RunConfigPanel& panel)
    : QObject(&window), window_(window), document_(document), panel_(panel) {
    import_ = new QAction(this);
    import_->setObjectName(QStringLiteral("importConfigAction"));
    connect(import_, &QAction::triggered, this, [this] {
        const QString path = QFileDialog::getOpenFileName(
            &window_, tr("Import configuration"), QString(),
            tr("DeepSpeed or Accelerate configurations (*.json *.yaml *.yml)"));
        if (path.isEmpty()) return;
        QStringList listing;
        QString error;
        if (!importConfig(path, &listing, &error))
            QMessageBox::warning(&window_, tr("Import configuration"), error);
        else
            showListing(path, listing);
    });
    perfetto_ = new QAction(this);
    perfetto_->setObjectName(QStringLiteral("exportPerfettoAction"));
    connect(perfetto_, &QAction::triggered, this, [this] {
        const QString path = QFileDialog::getSaveFileName(
            &window_, tr("Export for Perfetto"), QString(), tr("Chrome trace-event JSON (*.json)"));
        QString error;
        if (!path.isEmpty() && !exportPerfetto(path, &error))
            QMessageBox::warning(&window_, tr("Export for Perfetto"), error);
    });
    csv_ = new QAction(this);
    csv_->setObjectName(QStringLiteral("exportCsvAction"));
    connect(csv_, &QAction::triggered, this, [this] {
        const QString path = QFileDialog::getSaveFileName(&window_, tr("Export ledger as CSV"),
                                                          QString(), tr("CSV (*.csv)"));
        QString error;
        if (!path.isEmpty() && !exportCsv(path, &error))
            QMessageBox::warning(&window_, tr("Export ledger as CSV"), error);
    });
    window_.addFileAction(import_);
    window_.addFileAction(perfetto_);
    window_.addFileAction(csv_);
    window_.installEventFilter(this);
    retranslateUi();
}

bool ConfigFiles::importConfig(const QString& path, QStringList* listing, QString* error) {
    const RunRequest base = panel_.request();
    const runconfig::RunConfig current = toRunConfig(base);
    config_import::Context ctx;
    ctx.command = "the Ranks page";
    ctx.worldSize = base.ranks;
    ctx.strategy = std::string(plan::strategyName(base.strategy));
    ctx.hiddenSize = current.preset.shape.dModel;
    const std::vector<plan::UnitParams> units = plan::unitParams(current.preset.shape);
    if (units.size() > 2) ctx.blockParams = units[1].params;
    ctx.defaultMicroBatch = current.preset.microBatch;
    ctx.defaultLearningRate = current.preset.learningRate;
    // Every setting a configuration may set (runconfig/fields.h): the panel shows it in its
    // field, or lists it among the settings it carries.
    for (const std::string& flag : runconfig::importableFlags())
        ctx.accepted.insert(flag);
    try {
        const std::string file = path.toStdString();
        const std::string text = config_import::readConfigFile(file, "import");
        const bool yaml = path.endsWith(QStringLiteral(".yaml"), Qt::CaseInsensitive) ||
                          path.endsWith(QStringLiteral(".yml"), Qt::CaseInsensitive);
        const config_import::Parsed parsed =
            yaml ? config_import::parseAccelerateConfig(text, file, ctx)
                 : config_import::parseDsConfig(text, file, ctx);
        const config_import::Imported imported = config_import::finish(parsed, ctx, file);
        // The panel's own flags first, the file's after them: the one parser decides.
        std::vector<std::string> args = runconfig::toWorkerArgs(current);
        int ranks = base.ranks;
        for (std::size_t i = 0; i < imported.args.size(); ++i) {
            const std::string& flag = imported.args[i];
            const std::optional<runconfig::Field> field = runconfig::fieldOfFlag(flag);
            const bool hasValue =
                !field || runconfig::specOf(*field).kind != runconfig::ValueKind::Switch;
            if (flag == "--ranks") {
                ranks = std::stoi(imported.args[++i]);
                continue;
            }
            // Replace the panel's value of this flag.
            for (auto it = args.begin(); it != args.end();) {
                if (*it != flag) {
                    ++it;
                    continue;
                }
                const bool pair = hasValue && it + 1 != args.end();
                it = args.erase(it, pair ? it + 2 : it + 1);
            }
            args.push_back(flag);
            if (hasValue) args.push_back(imported.args[++i]);
        }
        if (ranks < 1 || ranks > kMaxRanks)
            throwInvalid("num_processes " + std::to_string(ranks) +
                         " is more ranks than the Ranks page shows");
        // Validated as a job of `ranks` processes (the threads choice is the panel's, unchanged).
        for (auto it = args.begin(); it != args.end();) {
            if (*it == "--shared-device")
                it = args.erase(it);
            else if (*it == "--ranks" && it + 1 != args.end())
                it = args.erase(it, it + 2);
            else
                ++it;
        }
        const runconfig::RunConfig result = runconfig::parseRunConfig(args, ranks);
        RunRequest now = fromRunConfig(result, base);
        now.ranks = ranks;
        now.threads = base.threads;
        panel_.setRequest(now);
        // Runs from here on carry the listing into their reports (shardscope-cli --config-import).
        report::ConfigImport forRuns;
        forRuns.source = config_import::utf8Text(file);
        for (const auto& a : imported.applied)
            forRuns.applied.emplace_back(a.key, a.setting);
        for (const auto& i : imported.ignored)
            forRuns.ignored.emplace_back(i.key, i.why);
        document_.session().setConfigImport(forRuns, panel_.request());
        if (listing) {
            listing->clear();
            for (const std::string& line : config_import::describe(imported))
                listing->push_back(QString::fromStdString(line));
        }
        return true;
    } catch (const std::exception& e) {
        if (error) *error = QString::fromStdString(e.what());
        return false;
    }
}

void ConfigFiles::showListing(const QString& path, const QStringList& listing) {
    QDialog dialog(&window_);
    dialog.setObjectName(QStringLiteral("configListing"));
    dialog.setWindowTitle(tr("Imported %1").arg(QFileInfo(path).fileName()));
    auto* layout = new QVBoxLayout(&dialog);
    int applied = 0;
    for (const QString& line : listing)
        applied += line.startsWith(QStringLiteral("applied:")) ? 1 : 0;
    layout->addWidget(
        new QLabel(tr("%1 settings applied to the run settings, %2 listed as ignored (with why):")
                       .arg(applied)
                       .arg(listing.size() - applied),
                   &dialog));
    auto* text = new QPlainTextEdit(listing.join(QLatin1Char('\n')), &dialog);
    text->setReadOnly(true);
    text->setMinimumSize(720, 360);
    layout->addWidget(text);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok, &dialog);
    connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
    layout->addWidget(buttons);
    dialog.exec();
}

bool ConfigFiles::exportPerfetto(const QString& path, QString* error) const {
    if (document_.model().stepCount() == 0) {
        if (error) *error = tr("nothing to export: run a job or open a recording first");
        return false;
    }
    try {
        trace_export::ExportCounts counts;
        trace_export::writePerfetto(document_.model(), path.toStdString(), "export", counts);
        return true;
    } catch (const std::exception& e) {
        if (error) *error = QString::fromStdString(e.what());
        return false;
    }
}

bool ConfigFiles::exportCsv(const QString& path, QString* error) const {
    if (document_.model().stepCount() == 0) {
        if (error) *error = tr("nothing to export: run a job or open a recording first");
        return false;
    }
    try {
        trace_export::ExportCounts counts;
        trace_export::writeLedgerCsv(document_.model(), path.toStdString(), "export", counts);
        return true;
    } catch (const std::exception& e) {
        if (error) *error = QString::fromStdString(e.what());
        return false;
    }
}

bool ConfigFiles::eventFilter(QObject* watched, QEvent* event) {
    if (watched == &window_ && event->type() == QEvent::LanguageChange) retranslateUi();
    return QObject::eventFilter(watched, event);
}

void ConfigFiles::retranslateUi() {
    import_->setText(tr("&Import configuration (DeepSpeed / Accelerate)…"));
    perfetto_->setText(tr("Export for &Perfetto…"));
    csv_->setText(tr("Export ledger as &CSV…"));
}

} // namespace shardscope::widgets
