#include "compare/compare_runner.h"

#include "common/flow_layout.h"
#include "common/run_labels.h"
#include "common/theory_names.h"
#include "launch/ending.h"
#include "plan/strategy.h"
#include "run/cli_process.h"
#include "run/run_request.h"
#include "run/run_session.h"

#include <QCheckBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QDir>
#include <QEvent>
#include <QFile>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>
#include <nlohmann/json.hpp>

namespace shardscope::widgets {
namespace {

// The order the CLI runs them in (DDP first: the baseline every parity badge measures against).
const std::vector<plan::Strategy> kStrategies = plan::classicStrategies();

} // namespace

CompareRunner::CompareRunner(QWidget* parent)
    : QWidget(parent),
      cliPath_(QCoreApplication::applicationDirPath() + QStringLiteral("/shardscope-cli")),
      title_(new QLabel(this)), ranksLabel_(new QLabel(this)), modelLabel_(new QLabel(this)),
      stepsLabel_(new QLabel(this)), ranks_(new QSpinBox(this)), model_(new QComboBox(this)),
      steps_(new QSpinBox(this)), threads_(new QCheckBox(this)), run_(new QPushButton(this)),
      tpLabel_(new QLabel(this)), tp_(new QSpinBox(this)), progress_(new QLabel(this)),
      error_(new QLabel(this)), cli_(new CliProcess(this)) {
    QFont bold = title_->font();
    bold.setBold(true);
    title_->setFont(bold);
    ranks_->setRange(1, 64);
    ranks_->setValue(4);
    ranks_->setObjectName(QStringLiteral("compareRanks"));
    // Preset ids are the CLI's --model values, so they stay untranslated.
    for (const char* id : {"tiny", "small", "medium", "tiny_tp", "small_tp"})
        model_->addItem(QString::fromLatin1(id), QString::fromLatin1(id));
    model_->setObjectName(QStringLiteral("compareModel"));
    steps_->setRange(1, 1000);
    steps_->setValue(3);
    steps_->setObjectName(QStringLiteral("compareSteps"));
    tp_->setRange(1, 64);
    tp_->setValue(1);
    tp_->setObjectName(QStringLiteral("compareTensorParallel"));
    threads_->setObjectName(QStringLiteral("compareThreads"));
    run_->setObjectName(QStringLiteral("compareRun"));
    progress_->setObjectName(QStringLiteral("compareProgress"));
    progress_->setTextFormat(Qt::PlainText);
    error_->setObjectName(QStringLiteral("compareError"));
    error_->setTextFormat(Qt::PlainText);
    error_->setWordWrap(true);
    error_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    error_->setStyleSheet(QStringLiteral("background: #fdecea; color: #8e1f14; border: 1px solid "
                                         "#e6a49c; padding: 6px; font-weight: bold;"));
    error_->setVisible(false);
    connect(cli_, &CliProcess::progress, this, &CompareRunner::onProgress);
    connect(cli_, &CliProcess::finished, this, &CompareRunner::onFinished);
    connect(run_, &QPushButton::clicked, this, [this] { running_ ? stop() : start(); });
    connect(threads_, &QCheckBox::toggled, this, &CompareRunner::retranslateUi);

    // One wrapping row: each label with its field, Run right after the title so no setting can
    // push it off the screen; the progress on its own line, wrapped, so a long status never
    // widens the window.
    auto* row = new FlowLayout(nullptr, 10, 4);
    row->setContentsMargins(0, 0, 0, 0);
    row->addWidget(title_);
    row->addWidget(run_);
    for (auto [label, field] : {std::pair<QLabel*, QWidget*>{ranksLabel_, ranks_},
                                {modelLabel_, model_},
                                {stepsLabel_, steps_},
                                {tpLabel_, tp_}}) {
        label->setBuddy(field);
        auto* pair = new QWidget(this);
        auto* h = new QHBoxLayout(pair);
        h->setContentsMargins(0, 0, 0, 0);
        h->addWidget(label);
        h->addWidget(field);
        row->addWidget(pair);
    }
    row->addWidget(threads_);
    progress_->setWordWrap(true);
    progress_->setVisible(false); // shown once a comparison reports
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(row);
    layout->addWidget(progress_);
    layout->addWidget(error_);
    setMpiUnavailable(mpiUnavailableReason());
    retranslateUi();
}

// The supervisor, a child, stops a running comparison (the CLI tears its jobs down).
CompareRunner::~CompareRunner() {
    cli_->disconnect(this);
}

void CompareRunner::setRanks(int ranks) {
    ranks_->setValue(ranks);
}
void CompareRunner::setSteps(int steps) {
    steps_->setValue(steps);
}
void CompareRunner::setThreads(bool threads) {
    threads_->setChecked(threads || !mpiUnavailable_.isEmpty());
}
bool CompareRunner::threads() const {
    return threads_->isChecked();
}

void CompareRunner::setMpiUnavailable(const QString& reason) {
    const bool wasForced = !mpiUnavailable_.isEmpty();
    mpiUnavailable_ = reason;
    if (!reason.isEmpty())
        threads_->setChecked(true);
    else if (wasForced)
        threads_->setChecked(false);
    threads_->setEnabled(reason.isEmpty() && !isRunning());
    retranslateUi();
}

void CompareRunner::setModel(const QString& preset) {
    const int i = model_->findData(preset);
    if (i >= 0) model_->setCurrentIndex(i);
}

bool CompareRunner::isRunning() const {
    return cli_->isRunning();
}
qint64 CompareRunner::processId() const {
    return cli_->processId();
}
QString CompareRunner::runButtonText() const {
    return run_->text();
}
QString CompareRunner::progressText() const {
    return progress_->text();
}
QString CompareRunner::errorText() const {
    return error_->isHidden() ? QString() : error_->text();
}

QStringList CompareRunner::arguments(const QString& jsonPath) const {
    QStringList a{QStringLiteral("compare"),
                  QStringLiteral("--ranks"),
                  QString::number(ranks_->value()),
                  QStringLiteral("--model"),
                  model_->currentData().toString(),
                  QStringLiteral("--steps"),
                  QString::number(steps_->value()),
                  QStringLiteral("--strategies"),
                  QString::fromStdString(plan::strategyList(kStrategies)),
                  QStringLiteral("--json"),
                  jsonPath};
    if (threads_->isChecked()) a << QStringLiteral("--shared-device");
    if (tp_->value() > 1) a << QStringLiteral("--tp") << QString::number(tp_->value());
    return a;
}

void CompareRunner::start() {
    if (isRunning()) return;
    error_->setVisible(false);
    const QFileInfo cli(cliPath_);
    if (!cli.exists() || !cli.isExecutable()) {
        showError(tr("shardscope-cli was not found at %1: build the shardscope-cli target (it runs "
                     "the comparison)")
                      .arg(QDir::toNativeSeparators(cliPath_)));
        return;
    }
    QString why;
    const QString folder = cli_->prepareFolder(&why);
    if (folder.isEmpty()) {
        showError(tr("cannot create a temporary folder for the report: %1").arg(why));
        return;
    }
    jsonPath_ = QDir(folder).filePath(QStringLiteral("compare.json"));
    jobs_ = 0;
    progress_->setVisible(true);
    progress_->setText(tr("Starting shardscope-cli compare…"));
    setRunning(true);
    cli_->start(cliPath_, arguments(jsonPath_));
}

void CompareRunner::stop() {
    if (!isRunning() || cli_->stopRequested()) return;
    cli_->stop();
    progress_->setText(tr("Stopping…"));
    Q_EMIT statusMessage(progress_->text());
}

// The CLI's progress events (--progress json): a job per strategy, then its steps.
void CompareRunner::onProgress(const QJsonObject& event) {
    if (cli_->stopRequested()) return;
    if (event.value(QStringLiteral("event")).toString() != QStringLiteral("job")) return;
    const QString name = event.value(QStringLiteral("strategy")).toString();
    const auto s = strategyFromName(name.toStdString());
    jobs_ = event.value(QStringLiteral("jobs")).toInt();
    progress_->setText(tr("Running %1 on %n rank(s) (%2 of %3)…", nullptr,
                          event.value(QStringLiteral("ranks")).toInt())
                           .arg(s ? strategyShortLabel(*s) : name)
                           .arg(event.value(QStringLiteral("index")).toInt())
                           .arg(jobs_));
    Q_EMIT statusMessage(progress_->text());
}

void CompareRunner::onFinished() {
    setRunning(false);
    if (cli_->stopRequested()) {
        progress_->setText(tr("Stopped."));
        Q_EMIT statusMessage(tr("Comparison stopped"));
        return;
    }
    if (cli_->failedToStart()) {
        progress_->clear();
        showError(tr("cannot start %1: %2")
                      .arg(QDir::toNativeSeparators(cliPath_), cli_->lastErrorLine()));
        return;
    }
    if (cli_->crashed() || cli_->exitCode() != 0) {
        progress_->clear();
        // A job that ran and failed: the CLI's typed ending, in the user's language.
        if (const auto& ending = cli_->ending();
            ending && ending->kind != launch::EndingKind::Completed) {
            showError(RunSession::endingText(*ending));
            return;
        }
        // Refused before any job ran: the CLI's one line naming what was wrong.
        const QString why = cli_->lastErrorLine();
        showError(!why.isEmpty() ? why
                  : cli_->crashed()
                      ? tr("shardscope-cli crashed")
                      : tr("shardscope-cli exited with code %1").arg(cli_->exitCode()));
        return;
    }
    QFile f(jsonPath_);
    if (!f.open(QIODevice::ReadOnly)) {
        progress_->clear();
        showError(tr("cannot read the comparison report %1: %2").arg(jsonPath_, f.errorString()));
        return;
    }
    const QByteArray json = f.readAll();
    f.close();
    cli_->releaseFolder(); // the report is in memory now; the folder goes
    progress_->setText(
        tr("Done: %1 strategies on %n rank(s).", nullptr, ranks_->value()).arg(jobs_));
    Q_EMIT finished(json);
}

void CompareRunner::showError(const QString& text) {
    error_->setText(text);
    error_->setVisible(!text.isEmpty());
    Q_EMIT statusMessage(text);
}

void CompareRunner::setRunning(bool running) {
    running_ = running;
    ranks_->setEnabled(!running);
    tp_->setEnabled(!running);
    model_->setEnabled(!running);
    steps_->setEnabled(!running);
    threads_->setEnabled(!running && mpiUnavailable_.isEmpty());
    retranslateUi();
}

void CompareRunner::changeEvent(QEvent* event) {
    if (event->type() == QEvent::LanguageChange) retranslateUi();
    QWidget::changeEvent(event);
}

void CompareRunner::retranslateUi() {
    title_->setText(tr("Run all strategies:"));
    ranksLabel_->setText(tr("Ranks"));
    tpLabel_->setText(tr("Tensor parallel (T)"));
    tp_->setToolTip(tr(
        "Run every strategy on a T × D mesh: T consecutive ranks split each block's computation, "
        "the strategy shards over the D = ranks / T data-parallel ranks. T must divide the ranks "
        "and "
        "the model's heads (tiny_tp, small_tp: 4)."));
    modelLabel_->setText(tr("Model"));
    stepsLabel_->setText(tr("Steps"));
    run_->setText(running_ ? tr("Stop") : tr("Run"));
    run_->setToolTip(
        running_ ? tr("Stop the comparison (the CLI tears its jobs down) (Esc)")
                 : tr("Run DDP, ZeRO-1, ZeRO-2, ZeRO-3 and FSDP back to back with the same seed "
                      "(shardscope-cli compare --deterministic) and show them side by side"));
    ranks_->setToolTip(threads_->isChecked()
                           ? tr("Data-parallel ranks: threads of one worker process")
                           : tr("Data-parallel ranks: one mpirun process each"));
    threads_->setText(tr("As threads (no MPI)"));
    threads_->setToolTip(
        mpiUnavailable_.isEmpty()
            ? tr("Run each strategy's ranks as threads of one shardscope-worker process "
                 "(shardscope-cli compare --shared-device) instead of mpirun processes")
            : tr("%1: the ranks run as threads of one process (shardscope-cli compare "
                 "--shared-device)")
                  .arg(mpiUnavailable_));
    model_->setToolTip(tr("The GPT preset every strategy trains"));
    steps_->setToolTip(tr("Training steps per strategy"));
}

} // namespace shardscope::widgets
