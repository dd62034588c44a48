#include "run/run_config_panel.h"

#include "common/byte_format.h"
#include "common/theory_names.h"
#include "plan/pipeline.h"
#include "plan/policy.h"
#include "predict/predict.h"
#include "run/run_request.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QEvent>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QToolButton>
#include <algorithm>
#include <climits>
#include <cmath>

namespace shardscope::widgets {
namespace {

using plan::Strategy;

// A spin box over the run configuration's own range for `field` (runconfig::kLimits).
int limitMax(runconfig::Field field, int cap = INT_MAX) {
    return static_cast<int>(std::min<std::int64_t>(runconfig::limitOf(field).max, cap));
}
int limitMin(runconfig::Field field) {
    return static_cast<int>(runconfig::limitOf(field).min);
}

QSpinBox* spin(int lo, int hi, int value) {
    auto* s = new QSpinBox;
    s->setRange(lo, hi);
    s->setValue(value);
    s->setKeyboardTracking(false);
    return s;
}

QString bytesText(std::uint64_t bytes) {
    if (bytes % (1ull << 20) == 0) return QStringLiteral("%1MiB").arg(bytes >> 20);
    if (bytes % 1024 == 0) return QStringLiteral("%1KiB").arg(bytes >> 10);
    return QString::number(bytes);
}

} // namespace

RunConfigPanel::RunConfigPanel(QWidget* parent) : QWidget(parent), gpu_(GpuSupport::probed()) {
    setObjectName(QStringLiteral("runConfigPanel"));
    build();
    fillCombos();
    loading_ = true;
    setMpiUnavailable(mpiUnavailableReason());
    loading_ = false;
    setRequest(RunRequest{});
    retranslateUi();
}

void RunConfigPanel::build() {
    form_ = new QFormLayout(this);
    form_->setContentsMargins(4, 4, 4, 4);
    form_->setRowWrapPolicy(QFormLayout::DontWrapRows);
    form_->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    model_ = new QComboBox;
    ranks_ = spin(1, kMaxRanks, 4);
    backend_ = new QComboBox;
    strategy_ = new QComboBox;
    steps_ = spin(1, kMaxSteps, 10);
    precision_ = new QComboBox;
    checkpointing_ = new QCheckBox;
    capacity_ = new QLineEdit;
    bucket_ = new QLineEdit;
    using runconfig::Field;
    prefetch_ = spin(limitMin(Field::Prefetch), limitMax(Field::Prefetch), 1);
    reshard_ = new QCheckBox;
    inflight_ = spin(limitMin(Field::MaxInflight), limitMax(Field::MaxInflight), 2);
    // Parameters up to the table's 2^53: a double spin box holds every such integer exactly.
    persistence_ = new QDoubleSpinBox;
    persistence_->setDecimals(0);
    persistence_->setRange(static_cast<double>(runconfig::limitOf(Field::Persistence).min),
                           static_cast<double>(runconfig::limitOf(Field::Persistence).max));
    persistence_->setKeyboardTracking(false);
    hybrid_ = spin(limitMin(Field::HybridGroup), kMaxRanks, 2);
    microBatch_ = spin(0, limitMax(Field::MicroBatch), 0); // 0: the preset's
    tensorParallel_ = spin(limitMin(Field::TensorParallel), kMaxRanks, 1);
    tensorParallel_->setObjectName(QStringLiteral("tensorParallelSpin"));
    pipeParallel_ = spin(limitMin(Field::PipeParallel), limitMax(Field::PipeParallel), 1);
    pipeParallel_->setObjectName(QStringLiteral("pipeParallelSpin"));
    pipeSchedule_ = new QComboBox;
    pipeSchedule_->setObjectName(QStringLiteral("pipeScheduleCombo"));
    for (const plan::PipeScheduleTraits& t : plan::kPipeScheduleTraits)
        pipeSchedule_->addItem(
            QString::fromLatin1(t.name.data(), static_cast<qsizetype>(t.name.size())),
            static_cast<int>(t.kind));
    virtualStages_ = spin(limitMin(Field::VirtualStages), limitMax(Field::VirtualStages), 1);
    virtualStages_->setObjectName(QStringLiteral("virtualStagesSpin"));
    gradAccum_ = spin(limitMin(Field::GradAccum), limitMax(Field::GradAccum), 1);
    gradAccum_->setObjectName(QStringLiteral("gradAccumSpin"));
    addField(RunField::Model, model_);
    addField(RunField::Ranks, ranks_);
    addField(RunField::TensorParallel, tensorParallel_);
    addField(RunField::PipeParallel, pipeParallel_);
    addField(RunField::PipeSchedule, pipeSchedule_);
    addField(RunField::VirtualStages, virtualStages_);
    addField(RunField::Backend, backend_);
    threads_ = new QCheckBox;
    threads_->setObjectName(QStringLiteral("threadsCheck"));
    addField(RunField::SharedDevice, threads_); // a whole row: its text is longer than a field
    launchNote_ = new QLabel;
    launchNote_->setObjectName(QStringLiteral("launchNote"));
    launchNote_->setWordWrap(true);
    launchNote_->setStyleSheet(QStringLiteral("color: #4a5968;"));
    launchNote_->setVisible(false);
    form_->insertRow(form_->rowCount() - 1, launchNote_); // under the checkbox, above its error
    addField(RunField::Strategy, strategy_);
    addField(RunField::Steps, steps_);
    addField(RunField::MicroBatch, microBatch_);
    addField(RunField::GradAccum, gradAccum_);
    precisionLabel_ = new QLabel;
    form_->addRow(precisionLabel_, precision_);
    form_->addRow(QString(), checkpointing_);
    addField(RunField::Capacity, capacity_);
    capacityWarning_ = new QLabel;
    capacityWarning_->setObjectName(QStringLiteral("capacityWarning"));
    capacityWarning_->setWordWrap(true);
    capacityWarning_->setStyleSheet(QStringLiteral("color: #8a5300;"));
    capacityWarning_->setVisible(false);
    form_->addRow(capacityWarning_);
    addField(RunField::BucketBytes, bucket_);
    addField(RunField::Prefetch, prefetch_);
    form_->addRow(QString(), reshard_);
    addField(RunField::MaxInflight, inflight_);
    addField(RunField::Persistence, persistence_);
    addField(RunField::HybridGroup, hybrid_);
    offloadOptimizer_ = new QComboBox;
    offloadParams_ = new QComboBox;
    for (QComboBox* c : {offloadOptimizer_, offloadParams_}) {
        c->addItem(QString(), static_cast<int>(Tier::Device));
        c->addItem(QString(), static_cast<int>(Tier::Host));
        c->addItem(QString(), static_cast<int>(Tier::Nvme));
    }
    offloadOptimizer_->setObjectName(QStringLiteral("offloadOptimizerCombo"));
    offloadParams_->setObjectName(QStringLiteral("offloadParamsCombo"));
    addField(RunField::OffloadOptimizer, offloadOptimizer_);
    addField(RunField::OffloadParams, offloadParams_);
    buildCheckpointFields();
    buildNvmeRows();
    buildCarriedRow();
    preview_ = new QLabel;
    preview_->setObjectName(QStringLiteral("theoryPreview"));
    preview_->setWordWrap(true);
    preview_->setTextFormat(Qt::RichText);
    form_->addRow(preview_);

    for (QComboBox* c : {model_, backend_, strategy_, precision_, offloadOptimizer_, offloadParams_,
                         pipeSchedule_}) {
        // Long entries (strategy names) must not widen the settings column past the screen.
        c->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
        c->setMinimumContentsLength(8);
        connect(c, &QComboBox::currentIndexChanged, this, &RunConfigPanel::onChanged);
    }
    connect(persistence_, &QDoubleSpinBox::valueChanged, this, &RunConfigPanel::onChanged);
    for (QSpinBox* s : {ranks_, steps_, prefetch_, inflight_, hybrid_, microBatch_, tensorParallel_,
                        pipeParallel_, virtualStages_, gradAccum_})
        connect(s, &QSpinBox::valueChanged, this, &RunConfigPanel::onChanged);
    for (QCheckBox* c : {checkpointing_, reshard_, threads_})
        connect(c, &QCheckBox::toggled, this, &RunConfigPanel::onChanged);
    for (QLineEdit* e : {capacity_, bucket_})
        connect(e, &QLineEdit::textChanged, this, &RunConfigPanel::onChanged);
}

// The settings without a field here that a loaded run or an imported configuration set: listed
// so that what runs is what the panel shows, with a button back to their defaults.
void RunConfigPanel::buildCarriedRow() {
    auto* row = new QWidget;
    row->setObjectName(QStringLiteral("carriedRow"));
    auto* h = new QHBoxLayout(row);
    h->setContentsMargins(0, 0, 0, 0);
    carriedNote_ = new QLabel;
    carriedNote_->setObjectName(QStringLiteral("carriedNote"));
    carriedNote_->setWordWrap(true);
    carriedNote_->setStyleSheet(QStringLiteral("color: #4a5968;"));
    carriedClear_ = new QToolButton;
    carriedClear_->setObjectName(QStringLiteral("carriedClear"));
    h->addWidget(carriedNote_, 1);
    h->addWidget(carriedClear_, 0, Qt::AlignTop);
    form_->insertRow(0, row); // first: what runs beside the fields must not hide below them
    row->setVisible(false);
    connect(carriedClear_, &QToolButton::clicked, this, [this] {
        carried_.clear();
        updateCarriedRow();
        onChanged();
    });
}

void RunConfigPanel::updateCarriedRow() {
    RunRequest r;
    r.carried = carried_;
    const QStringList flags = r.carriedFlags();
    // A flag and its value wrap as one ("--lr 0.02", never "--" at a line's end): non-breaking
    // hyphens and spaces inside each.
    QStringList unbroken;
    for (QString flag : flags)
        unbroken << flag.replace(QLatin1Char('-'), QChar(0x2011))
                        .replace(QLatin1Char(' '), QChar(0x00A0));
    carriedNote_->setText(tr("Also set, kept from the loaded run or configuration: %1")
                              .arg(unbroken.join(QStringLiteral(", "))));
    carriedNote_->parentWidget()->setVisible(!flags.isEmpty());
}

// Save folder, save every K steps, resume from: passed as --save, --save-every, --resume.
void RunConfigPanel::buildCheckpointFields() {
    saveDir_ = new QLineEdit;
    saveDir_->setObjectName(QStringLiteral("saveDirEdit"));
    saveEvery_ =
        spin(0, static_cast<int>(std::min<std::int64_t>(runconfig::kMaxSaveEvery, INT_MAX)), 0);
    saveEvery_->setObjectName(QStringLiteral("saveEverySpin"));
    resume_ = new QLineEdit;
    resume_->setObjectName(QStringLiteral("resumeEdit"));
    // A folder is typed or chosen: "…" beside each path opens a folder dialog.
    const auto withBrowse = [this](QLineEdit* edit, const QString& name) {
        auto* row = new QWidget;
        auto* h = new QHBoxLayout(row);
        h->setContentsMargins(0, 0, 0, 0);
        auto* browse = new QToolButton;
        browse->setObjectName(name);
        browse->setText(QStringLiteral("…"));
        h->addWidget(edit, 1);
        h->addWidget(browse);
        connect(browse, &QToolButton::clicked, this, [this, edit] {
            const QString dir = QFileDialog::getExistingDirectory(this, QString(), edit->text());
            if (!dir.isEmpty()) edit->setText(dir);
        });
        return row;
    };
    addField(RunField::Save, withBrowse(saveDir_, QStringLiteral("saveDirBrowse")));
    addField(RunField::SaveEvery, saveEvery_);
    addField(RunField::Resume, withBrowse(resume_, QStringLiteral("resumeBrowse")));
    for (QLineEdit* e : {saveDir_, resume_})
        connect(e, &QLineEdit::textChanged, this, &RunConfigPanel::onChanged);
    connect(saveEvery_, &QSpinBox::valueChanged, this, &RunConfigPanel::onChanged);
}

void RunConfigPanel::addField(RunField field, QWidget* widget) {
    Row row;
    row.widget = widget;
    row.label = new QLabel(this);
    row.error = new QLabel;
    row.error->setWordWrap(true);
    row.error->setStyleSheet(QStringLiteral("color: #c0392b;"));
    row.error->setVisible(false);
    row.error->setObjectName(QStringLiteral("fieldError%1").arg(static_cast<int>(field)));
    if (field == RunField::SharedDevice) {
        row.label->setVisible(false);
        form_->addRow(widget);
    } else {
        form_->addRow(row.label, widget);
    }
    form_->addRow(row.error);
    rows_[field] = row;
}

void RunConfigPanel::fillCombos() {
    const QSignalBlocker b1(model_), b2(strategy_), b3(precision_), b4(backend_);
    // Every preset the worker accepts, as it parses them.
    for (const runconfig::ModelPreset& p : runconfig::modelPresets()) {
        const QString id = QString::fromStdString(p.name);
        model_->addItem(id, id);
        model_->setItemData(model_->count() - 1, QString::fromStdString(p.description),
                            Qt::ToolTipRole);
    }
    for (Strategy s : plan::allStrategies())
        strategy_->addItem(QString(), static_cast<int>(s));
    precision_->addItem(QString(), static_cast<int>(plan::PrecisionKind::MixedBf16));
    precision_->addItem(QString(), static_cast<int>(plan::PrecisionKind::Fp32));
    backend_->addItem(QString());
    backend_->addItem(QString());
    updateBackendItem();
}

// No usable GPU: the entry stays visible (users look for it) but cannot be chosen, and its
// tooltip says why.
void RunConfigPanel::updateBackendItem() {
    const bool usable = gpuUnavailableReason(gpu_).isEmpty();
    if (auto* m = qobject_cast<QStandardItemModel*>(backend_->model()))
        m->item(1)->setEnabled(usable);
    backend_->setItemData(1, gpuDescription(gpu_), Qt::ToolTipRole);
}

void RunConfigPanel::setGpuSupport(const GpuSupport& gpu) {
    gpu_ = gpu;
    updateBackendItem();
    onChanged();
}

void RunConfigPanel::setMpiUnavailable(const QString& reason) {
    const bool wasForced = !mpiUnavailable_.isEmpty();
    mpiUnavailable_ = reason;
    {
        const QSignalBlocker block(threads_);
        if (!reason.isEmpty())
            threads_->setChecked(true);
        else if (wasForced)
            threads_->setChecked(false); // back to the default: mpirun
    }
    threads_->setEnabled(reason.isEmpty());
    onChanged();
}

QString RunConfigPanel::launchNote() const {
    return launchNote_->isHidden() ? QString() : launchNote_->text();
}

RunRequest RunConfigPanel::request() const {
    RunRequest r;
    r.model = model_->currentData().toString();
    r.ranks = ranks_->value();
    r.gpu = backend_->currentIndex() == 1;
    r.threads = threads_->isChecked();
    r.strategy = static_cast<Strategy>(strategy_->currentData().toInt());
    r.precision = static_cast<plan::PrecisionKind>(precision_->currentData().toInt());
    r.checkpointing = checkpointing_->isChecked();
    r.steps = steps_->value();
    QString ignored;
    r.capacityBytes = parseByteText(capacity_->text(), &ignored);
    r.bucketBytes = parseByteText(bucket_->text(), &ignored).value_or(RunRequest{}.bucketBytes);
    r.prefetch = prefetch_->value();
    r.reshardAfterForward = reshard_->isChecked();
    r.maxInflight = inflight_->value();
    r.persistenceThreshold = static_cast<std::uint64_t>(std::llround(persistence_->value()));
    r.hybridGroup = hybrid_->value();
    r.microBatch = microBatch_->value();
    // A disabled choice is not a choice: the strategy cannot offload that state. (Disabled by the
    // strategy, not by the panel being locked while a run or a recording loads.)
    if (offloadOptimizer_->isEnabledTo(this))
        r.offloadOptimizer = static_cast<Tier>(offloadOptimizer_->currentData().toInt());
    if (offloadParams_->isEnabledTo(this))
        r.offloadParams = static_cast<Tier>(offloadParams_->currentData().toInt());
    r.nvmeDir = nvmeDir_->text().trimmed();
    r.aioBlockBytes =
        parseByteText(aioBlock_->text(), &ignored).value_or(RunRequest{}.aioBlockBytes);
    r.aioQueueDepth = aioQueueDepth_->value();
    r.tensorParallel = tensorParallel_->value();
    r.pipeParallel = pipeParallel_->value();
    r.pipeSchedule = static_cast<plan::PipeSchedule>(pipeSchedule_->currentData().toInt());
    // A schedule without virtual stages runs one chunk a rank, whatever the greyed box holds.
    r.virtualStages = plan::traits(r.pipeSchedule).virtualStages ? virtualStages_->value() : 1;
    r.gradAccum = gradAccum_->value();
    r.saveDir = saveDir_->text().trimmed();
    r.saveEvery = saveEvery_->value();
    r.resumePath = resume_->text().trimmed();
    r.carried = carried_;
    return r;
}

void RunConfigPanel::setRequest(const RunRequest& r) {
    loading_ = true; // one onChanged() at the end, not one per field
    model_->setCurrentIndex(std::max(0, model_->findData(r.model)));
    ranks_->setValue(r.ranks);
    backend_->setCurrentIndex(r.gpu ? 1 : 0);
    threads_->setChecked(r.threads || !mpiUnavailable_.isEmpty());
    strategy_->setCurrentIndex(std::max(0, strategy_->findData(static_cast<int>(r.strategy))));
    precision_->setCurrentIndex(std::max(0, precision_->findData(static_cast<int>(r.precision))));
    checkpointing_->setChecked(r.checkpointing);
    steps_->setValue(r.steps);
    capacity_->setText(r.capacityBytes ? bytesText(*r.capacityBytes) : QString());
    bucket_->setText(bytesText(r.bucketBytes));
    prefetch_->setValue(r.prefetch);
    reshard_->setChecked(r.reshardAfterForward);
    inflight_->setValue(r.maxInflight);
    persistence_->setValue(static_cast<double>(r.persistenceThreshold));
    hybrid_->setValue(r.hybridGroup);
    microBatch_->setValue(r.microBatch);
    offloadOptimizer_->setCurrentIndex(
        std::max(0, offloadOptimizer_->findData(static_cast<int>(r.offloadOptimizer))));
    offloadParams_->setCurrentIndex(
        std::max(0, offloadParams_->findData(static_cast<int>(r.offloadParams))));
    nvmeDir_->setText(r.nvmeDir);
    aioBlock_->setText(bytesText(r.aioBlockBytes));
    aioQueueDepth_->setValue(r.aioQueueDepth);
    tensorParallel_->setValue(r.tensorParallel);
    pipeParallel_->setValue(r.pipeParallel);
    pipeSchedule_->setCurrentIndex(
        std::max(0, pipeSchedule_->findData(static_cast<int>(r.pipeSchedule))));
    virtualStages_->setValue(r.virtualStages);
    gradAccum_->setValue(r.gradAccum);
    saveDir_->setText(r.saveDir);
    saveEvery_->setValue(r.saveEvery);
    resume_->setText(r.resumePath);
    carried_ = r.carried;
    updateCarriedRow();
    loading_ = false;
    onChanged();
}

std::vector<FieldIssue> RunConfigPanel::issues() const {
    std::vector<FieldIssue> out;
    QString error;
    if (parseByteText(capacity_->text(), &error); !error.isEmpty())
        out.push_back({RunField::Capacity, error});
    error.clear();
    if (parseByteText(bucket_->text(), &error); !error.isEmpty())
        out.push_back({RunField::BucketBytes, error});
    error.clear();
    if (request().usesNvme() && (parseByteText(aioBlock_->text(), &error), !error.isEmpty()))
        out.push_back({RunField::AioBlockBytes, error});
    for (FieldIssue& i : validate(request(), gpu_))
        if (std::none_of(out.begin(), out.end(),
                         [&](const FieldIssue& o) { return o.field == i.field; }))
            out.push_back(i);
    return out;
}

QString RunConfigPanel::errorText(RunField field) const {
    const auto it = rows_.find(field);
    return it != rows_.end() && !it->second.error->isHidden() ? it->second.error->text()
                                                              : QString();
}

QWidget* RunConfigPanel::fieldWidget(RunField field) const {
    const auto it = rows_.find(field);
    return it != rows_.end() ? it->second.widget : nullptr;
}

void RunConfigPanel::onChanged() {
    if (loading_) return;
    const Strategy s = static_cast<Strategy>(strategy_->currentData().toInt());
    const plan::Policy policy = plan::policyFor(s);
    prefetch_->setEnabled(policy.usesPrefetch());
    reshard_->setEnabled(policy.usesReshardAfterForward());
    inflight_->setEnabled(policy.usesMaxInflight());
    persistence_->setEnabled(policy.usesPersistence());
    hybrid_->setEnabled(policy.usesHybridGroup());
    pipeSchedule_->setEnabled(pipeParallel_->value() > 1); // a schedule orders stages
    virtualStages_->setEnabled(
        pipeParallel_->value() > 1 &&
        plan::traits(static_cast<plan::PipeSchedule>(pipeSchedule_->currentData().toInt()))
            .virtualStages);
    updateOffloadChoices(policy);
    updateNvmeRows();
    const RunRequest r = request();
    QString note;
    if (!mpiUnavailable_.isEmpty())
        note = tr("%1: the ranks run as threads of one process").arg(mpiUnavailable_);
    else if (r.threads && r.gpu)
        note =
            tr("All %1 ranks share GPU 0, each with its own stream and memory pool.").arg(r.ranks);
    else if (r.threads)
        note = tr("One worker process, no mpirun: the ranks exchange data through shared memory.");
    launchNote_->setText(note);
    launchNote_->setVisible(!note.isEmpty());
    for (auto& [field, row] : rows_)
        row.error->setVisible(false);
    for (const FieldIssue& i : issues()) {
        Row& row = rows_[i.field];
        row.error->setText(i.message);
        row.error->setVisible(true);
    }
    updatePreview();
    Q_EMIT requestChanged();
}

// Offload choices stay visible but are disabled, with the reason as their tooltip, where the
// strategy or the precision cannot offload that state (runconfig/problems.h says the same).
void RunConfigPanel::updateOffloadChoices(const plan::Policy& policy) {
    const bool bf16 = static_cast<plan::PrecisionKind>(precision_->currentData().toInt()) ==
                      plan::PrecisionKind::MixedBf16;
    const QString strategy = strategy_->currentText();
    QString optimizerWhy, paramsWhy;
    if (!policy.shardOptimizer)
        optimizerWhy =
            tr("%1 does not shard the optimizer: every rank updates everything on its device.")
                .arg(strategy);
    else if (!bf16)
        optimizerWhy =
            tr("Offload keeps fp32 master weights beside bf16 parameters: choose bf16 precision.");
    if (!policy.shardParams)
        paramsWhy =
            tr("%1 keeps whole parameters on every device: only ZeRO-3 and FSDP shard them.")
                .arg(strategy);
    else if (!bf16)
        paramsWhy =
            tr("Offload keeps fp32 master weights beside bf16 parameters: choose bf16 precision.");
    offloadOptimizer_->setEnabled(optimizerWhy.isEmpty());
    offloadParams_->setEnabled(paramsWhy.isEmpty());
    // Each NVMe entry is offered where runconfig accepts it, else disabled with its reason.
    for (QComboBox* c : {offloadOptimizer_, offloadParams_}) {
        RunRequest probe = request();
        probe.precision = plan::PrecisionKind::MixedBf16;
        (c == offloadOptimizer_ ? probe.offloadOptimizer : probe.offloadParams) = Tier::Nvme;
        const runconfig::Field field = c == offloadOptimizer_ ? runconfig::Field::OffloadOptimizer
                                                              : runconfig::Field::OffloadParams;
        QString why;
        for (const runconfig::Problem& p : runconfig::validate(toRunConfig(probe)))
            if (p.field == field && p.code == runconfig::Code::OffloadTierNotBuilt)
                why = describe(p);
        const int item = c->findData(static_cast<int>(Tier::Nvme));
        if (auto* m = qobject_cast<QStandardItemModel*>(c->model()))
            m->item(item)->setEnabled(why.isEmpty());
        c->setItemData(item,
                       why.isEmpty()
                           ? tr("ZeRO-Infinity: the states live in files under the NVMe folder, "
                                "read and written "
                                "with O_DIRECT through asynchronous I/O while the ranks compute.")
                           : why,
                       Qt::ToolTipRole);
        if (!why.isEmpty() && c->currentData().toInt() == static_cast<int>(Tier::Nvme)) {
            const QSignalBlocker block(c);
            c->setCurrentIndex(c->findData(static_cast<int>(Tier::Device)));
        }
    }
    offloadOptimizer_->setToolTip(
        optimizerWhy.isEmpty()
            ? tr("ZeRO-Offload: master weights, Adam m and v (and gradient shards) in host memory; "
                 "the optimizer step runs on the CPU.")
            : optimizerWhy);
    offloadParams_->setToolTip(
        paramsWhy.isEmpty()
            ? tr("ZeRO-Offload: parameter shards in host memory, copied to the device before each "
                 "all-gather.")
            : paramsWhy);
}

// The NVMe tier's folder (with a picker) and, behind "Advanced", DeepSpeed's aio block size and
// queue depth. The rows show only when a state goes to NVMe.
void RunConfigPanel::buildNvmeRows() {
    nvmeDirRow_ = new QWidget;
    auto* row = new QHBoxLayout(nvmeDirRow_);
    row->setContentsMargins(0, 0, 0, 0);
    nvmeDir_ = new QLineEdit;
    nvmeDir_->setObjectName(QStringLiteral("nvmeDirEdit"));
    nvmeBrowse_ = new QToolButton;
    nvmeBrowse_->setObjectName(QStringLiteral("nvmeBrowseButton"));
    row->addWidget(nvmeDir_, 1);
    row->addWidget(nvmeBrowse_);
    addField(RunField::NvmeDir, nvmeDirRow_);
    nvmeAdvanced_ = new QToolButton;
    nvmeAdvanced_->setObjectName(QStringLiteral("nvmeAdvancedButton"));
    nvmeAdvanced_->setCheckable(true);
    nvmeAdvanced_->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    nvmeAdvanced_->setArrowType(Qt::RightArrow);
    nvmeAdvanced_->setAutoRaise(true);
    form_->addRow(QString(), nvmeAdvanced_);
    aioBlock_ = new QLineEdit;
    aioBlock_->setObjectName(QStringLiteral("aioBlockEdit"));
    aioQueueDepth_ = spin(1, 1024, static_cast<int>(runconfig::RunConfig{}.aioQueueDepth));
    aioQueueDepth_->setObjectName(QStringLiteral("aioQueueDepthSpin"));
    addField(RunField::AioBlockBytes, aioBlock_);
    addField(RunField::AioQueueDepth, aioQueueDepth_);
    connect(nvmeBrowse_, &QToolButton::clicked, this, &RunConfigPanel::chooseNvmeDir);
    connect(nvmeAdvanced_, &QToolButton::toggled, this, [this](bool on) {
        nvmeAdvanced_->setArrowType(on ? Qt::DownArrow : Qt::RightArrow);
        updateNvmeRows();
    });
    for (QLineEdit* e : {nvmeDir_, aioBlock_})
        connect(e, &QLineEdit::textChanged, this, &RunConfigPanel::onChanged);
    connect(aioQueueDepth_, &QSpinBox::valueChanged, this, &RunConfigPanel::onChanged);
}

void RunConfigPanel::updateNvmeRows() {
    const bool nvme = request().usesNvme();
    form_->setRowVisible(nvmeDirRow_, nvme);
    form_->setRowVisible(nvmeAdvanced_, nvme);
    for (QWidget* w : {static_cast<QWidget*>(aioBlock_), static_cast<QWidget*>(aioQueueDepth_)})
        form_->setRowVisible(w, nvme && nvmeAdvanced_->isChecked());
}

void RunConfigPanel::chooseNvmeDir() {
    const QString dir = QFileDialog::getExistingDirectory(
        this, tr("Folder for the NVMe tier's files"), nvmeDir_->text());
    if (!dir.isEmpty()) nvmeDir_->setText(dir);
}

void RunConfigPanel::updatePreview() {
    const RunRequest r = request();
    const runconfig::ModelPreset* preset = findRunPreset(r.model);
    predictedPeak_.reset();
    if (!preset || !isValid()) {
        preview_->clear();
        updateCapacityWarning(r);
        return;
    }
    try {
        // A bf16 run's linear layers run in bf16 where the worker's CPU has bf16 units, which
        // moves the peak (its inputs kept in bf16, dy copied for each call): the worker decides,
        // so the budget is held to the larger of the two.
        const auto peakOf = [](const theory::Scenario& one) {
            std::uint64_t p = predict::predictPeak(one).peakBytes;
            if (one.precision.kind == plan::PrecisionKind::MixedBf16) {
                theory::Scenario units = one;
                units.knobs.bf16Gemm = true;
                p = std::max(p, predict::predictPeak(units).peakBytes);
            }
            return p;
        };
        // A pipeline's stages hold different units: the fullest stage speaks for the budget.
        const runconfig::RunConfig config = toRunConfig(r);
        int stage = 0;
        theory::Scenario sc = runconfig::scenarioOf(config);
        theory::validate(sc);
        predictedPeak_ = peakOf(sc);
        for (int st = 1; st < config.pipeParallel; ++st) {
            const theory::Scenario other = runconfig::scenarioOf(config, st);
            theory::validate(other);
            if (const std::uint64_t p = peakOf(other); p > *predictedPeak_) {
                predictedPeak_ = p;
                sc = other;
                stage = st;
            }
        }
        const auto perRank = theory::modelStates(sc).perRank;
        const auto states = static_cast<double>(perRank.tier(Tier::Device));
        double allTiers = 0;
        for (Tier t : kAllTiers)
            allTiers += static_cast<double>(perRank.tier(t));
        const auto peak = static_cast<double>(*predictedPeak_);
        sc.strategy = Strategy::Ddp;
        sc.offload = {}; // the baseline keeps everything on the device
        const auto ddp = static_cast<double>(theory::modelStates(sc).perRank.tier(Tier::Device));
        const QString params = formatCount(static_cast<double>(plan::paramCount(preset->shape)));
        // With offload the saving is the sharding's (all tiers); the device part is what the budget
        // sees.
        const QString ofStage =
            config.pipeParallel > 1
                ? QLatin1Char(' ') + tr("(With %1 pipeline stages: stage %2's ranks, the fullest.)")
                                         .arg(config.pipeParallel)
                                         .arg(stage)
                : QString();
        if (allTiers > states)
            preview_->setText(
                tr("<b>Theory per rank</b>: model states %1 on the device, %2 in all tiers (DDP: "
                   "%3, %4× less), "
                   "predicted peak %5. Ψ = %6 parameters.")
                    .arg(formatDecimal(states), formatDecimal(allTiers), formatDecimal(ddp))
                    .arg(ddp / std::max(allTiers, 1.0), 0, 'f', 2)
                    .arg(formatDecimal(peak), params) +
                ofStage);
        else
            preview_->setText(tr("<b>Theory per rank</b>: model states %1 (DDP: %2, %3× less), "
                                 "predicted peak %4. Ψ = %5 parameters.")
                                  .arg(formatDecimal(states), formatDecimal(ddp))
                                  .arg(ddp / std::max(states, 1.0), 0, 'f', 2)
                                  .arg(formatDecimal(peak), params) +
                              ofStage);
    } catch (const std::exception& e) {
        preview_->setText(tr("Theory cannot size this run: %1")
                              .arg(QString::fromStdString(e.what()).toHtmlEscaped()));
    }
    updateCapacityWarning(r);
}

// A warning, not an error: a run over its budget is a lesson too, but nobody should start one
// by accident.
void RunConfigPanel::updateCapacityWarning(const RunRequest& r) {
    QString text;
    if (r.capacityBytes && predictedPeak_ && *predictedPeak_ > *r.capacityBytes)
        text = tr("The predicted peak per rank (%1) exceeds the budget (%2): the run is expected "
                  "to stop with out of memory.")
                   .arg(formatDecimal(static_cast<double>(*predictedPeak_)),
                        formatDecimal(static_cast<double>(*r.capacityBytes)));
    capacityWarning_->setText(text);
    capacityWarning_->setVisible(!text.isEmpty());
}

QString RunConfigPanel::capacityWarning() const {
    return capacityWarning_->text();
}

} // namespace shardscope::widgets
