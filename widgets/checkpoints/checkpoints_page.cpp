#include "checkpoints/checkpoints_page.h"

#include "checkpoints/reshard_view.h"
#include "common/byte_format.h"
#include "common/category_palette.h"
#include "common/palette_legend.h"
#include "common/side_column.h"
#include "common/theory_names.h"
#include "core/error.h"
#include "playback/explain_text.h"
#include "playback/glossary_terms.h"
#include "runconfig/fields.h"
#include "runconfig/presets.h"
#include "runconfig/run_config.h"

#include <QAction>
#include <QComboBox>
#include <QDir>
#include <QEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QScrollArea>
#include <QSpinBox>
#include <QSplitter>
#include <QStandardItemModel>
#include <QTabWidget>
#include <QThread>
#include <QToolTip>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace shardscope::widgets {
namespace {

// The target world's range: the rank view's columns, as a resumed run may have.
constexpr int kMaxTargetRanks = kMaxRanks;

const runconfig::ModelPreset* presetWithShape(const plan::GptShape& s) {
    for (const runconfig::ModelPreset& p : runconfig::modelPresets())
        if (p.shape.layers == s.layers && p.shape.dModel == s.dModel && p.shape.heads == s.heads &&
            p.shape.vocab == s.vocab && p.shape.seqLen == s.seqLen)
            return &p;
    return nullptr;
}

QString q(const std::string& s) {
    return QString::fromStdString(s);
}

} // namespace

RunRequest resumeRequest(RunRequest base, const ResumeChoice& c) {
    base.model = c.model;
    base.ranks = c.ranks;
    base.strategy = c.strategy;
    if (c.hybridGroup > 0) base.hybridGroup = c.hybridGroup;
    // The checkpoint's seed, and its learning rate (the resume reads it): none carried from
    // earlier settings.
    std::erase_if(base.carried, [](const auto& entry) {
        return entry.first == runconfig::Field::Seed ||
               entry.first == runconfig::Field::LearningRate;
    });
    if (c.seed != runconfig::RunConfig{}.seed)
        base.carry(runconfig::Field::Seed, static_cast<std::int64_t>(c.seed));
    base.precision = c.precision;
    base.microBatch = c.microBatch;
    base.tensorParallel = 1;
    base.resumePath = c.path;
    return base;
}

CheckpointsPage::CheckpointsPage(QWidget* parent) : QWidget(parent) {
    setObjectName(QStringLiteral("checkpointsPage"));
    build();
    retranslateUi();
}

// A verification still running keeps its own copy of what it checks and finishes on its
// thread; its result is dropped (the connection dies with the page).
CheckpointsPage::~CheckpointsPage() = default;

void CheckpointsPage::build() {
    openAction_ = new QAction(this);
    openAction_->setObjectName(QStringLiteral("openCheckpointAction"));
    connect(openAction_, &QAction::triggered, this, &CheckpointsPage::chooseFolder);

    auto* side = new QWidget;
    auto* col = new QVBoxLayout(side);
    openButton_ = new QPushButton;
    openButton_->setObjectName(QStringLiteral("openCheckpointButton"));
    connect(openButton_, &QPushButton::clicked, this, &CheckpointsPage::chooseFolder);
    col->addWidget(openButton_);
    pathLabel_ = new QLabel;
    pathLabel_->setWordWrap(true);
    pathLabel_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    col->addWidget(pathLabel_);
    message_ = new QLabel;
    message_->setObjectName(QStringLiteral("checkpointMessage"));
    message_->setWordWrap(true);
    message_->setStyleSheet(QStringLiteral("color: %1;").arg(alertColor().name()));
    message_->setVisible(false);
    col->addWidget(message_);
    summary_ = new QLabel;
    summary_->setObjectName(QStringLiteral("checkpointSummary"));
    summary_->setWordWrap(true);
    col->addWidget(summary_);

    auto* form = new QFormLayout;
    form->setRowWrapPolicy(QFormLayout::WrapLongRows);
    step_ = new QComboBox;
    step_->setObjectName(QStringLiteral("stepCombo"));
    ranks_ = new QSpinBox;
    ranks_->setObjectName(QStringLiteral("targetRanksSpin"));
    ranks_->setRange(1, kMaxTargetRanks);
    ranks_->setValue(2);
    strategy_ = new QComboBox;
    strategy_->setObjectName(QStringLiteral("targetStrategyCombo"));
    strategy_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    strategy_->setMinimumContentsLength(8);
    for (plan::Strategy s : plan::allStrategies())
        strategy_->addItem(QString(), static_cast<int>(s));
    strategy_->setCurrentIndex(strategy_->findData(static_cast<int>(plan::Strategy::Zero3)));
    hybrid_ = new QSpinBox;
    hybrid_->setRange(1, kMaxTargetRanks);
    hybrid_->setValue(2);
    stepLabel_ = new QLabel;
    ranksLabel_ = new QLabel;
    strategyLabel_ = new QLabel;
    hybridLabel_ = new QLabel;
    form->addRow(stepLabel_, step_);
    form->addRow(ranksLabel_, ranks_);
    form->addRow(strategyLabel_, strategy_);
    form->addRow(hybridLabel_, hybrid_);
    col->addLayout(form);
    connect(step_, &QComboBox::currentIndexChanged, this, [this] {
        if (step_->currentIndex() >= 0) openStep(step_->currentData().toString());
    });
    connect(ranks_, &QSpinBox::valueChanged, this, &CheckpointsPage::replan);
    connect(hybrid_, &QSpinBox::valueChanged, this, &CheckpointsPage::replan);
    connect(strategy_, &QComboBox::currentIndexChanged, this, &CheckpointsPage::replan);

    resume_ = new QPushButton;
    resume_->setObjectName(QStringLiteral("resumeHereButton"));
    resume_->setEnabled(false);
    connect(resume_, &QPushButton::clicked, this, [this] {
        if (const auto c = resumeChoice()) Q_EMIT resumeRequested(*c);
    });
    col->addWidget(resume_);
    resumeNote_ = new QLabel;
    resumeNote_->setWordWrap(true);
    resumeNote_->setStyleSheet(QStringLiteral("color: #4a5968;"));
    col->addWidget(resumeNote_);
    explain_ = new QLabel;
    explain_->setObjectName(QStringLiteral("checkpointExplain"));
    explain_->setWordWrap(true);
    explain_->setTextFormat(Qt::RichText);
    connect(explain_, &QLabel::linkHovered, this, [this](const QString& link) {
        const auto entries = Glossary::entries();
        const GlossaryEntry* g =
            Glossary::find(entries, link.mid(QStringLiteral("glossary:").size()));
        if (g)
            QToolTip::showText(QCursor::pos(),
                               QStringLiteral("<b>%1</b><br>%2")
                                   .arg(g->term.toHtmlEscaped(), g->definition.toHtmlEscaped()),
                               explain_);
        else
            QToolTip::hideText();
    });
    col->addWidget(explain_);
    col->addStretch(1);

    view_ = new ReshardView;
    auto* viewScroll = new QScrollArea;
    viewScroll->setObjectName(QStringLiteral("reshardScroll"));
    viewScroll->setWidget(view_);
    viewScroll->setWidgetResizable(true);
    viewScroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    legend_ = new QLabel;
    legend_->setWordWrap(true);
    auto* top = new QWidget;
    auto* topLayout = new QVBoxLayout(top);
    topLayout->setContentsMargins(0, 0, 0, 0);
    topLayout->addWidget(new PaletteLegend({ColorFamily::Ranks}));
    topLayout->addWidget(legend_);
    topLayout->addWidget(viewScroll, 1);

    reads_ = new QTreeWidget;
    reads_->setObjectName(QStringLiteral("readsTree"));
    reads_->setColumnCount(5);
    reads_->setRootIsDecorated(true);
    files_ = new QTreeWidget;
    files_->setObjectName(QStringLiteral("filesTree"));
    files_->setColumnCount(4);
    files_->setRootIsDecorated(false);
    for (QTreeWidget* t : {reads_, files_}) {
        t->setUniformRowHeights(true);
        t->header()->setStretchLastSection(true);
    }
    tabs_ = new QTabWidget;
    tabs_->addTab(reads_, QString());
    tabs_->addTab(files_, QString());

    auto* split = new QSplitter(Qt::Vertical);
    split->addWidget(top);
    split->addWidget(tabs_);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    split->setChildrenCollapsible(false);

    auto* layout = new QHBoxLayout(this);
    layout->addWidget(sideColumn(side, 300));
    layout->addWidget(split, 1);
}

void CheckpointsPage::chooseFolder() {
    const QString dir =
        QFileDialog::getExistingDirectory(this, tr("Open a checkpoint folder"), root_);
    if (!dir.isEmpty()) openFolder(dir);
}

void CheckpointsPage::showMessage(const QString& text) {
    error_ = text;
    targetProblem_ = false;
    message_->setText(text);
    message_->setVisible(!text.isEmpty());
}

QString CheckpointsPage::message() const {
    return error_;
}

// Forgets the open checkpoint; a verification still running is dropped when it ends.
void CheckpointsPage::clearCheckpoint() {
    ++generation_;
    opened_.reset();
    meta_.reset();
    plan_.reset();
    checks_.clear();
    verifying_ = false;
    verifyError_.clear();
    view_->setPlan(nullptr, nullptr);
    showMessage({});
    summary_->setToolTip({});
}

bool CheckpointsPage::refuse(const QString& why) {
    showMessage(tr("Cannot open the checkpoint: %1").arg(why));
    fillReads();
    fillFiles();
    updateSummary();
    return false;
}

// The listing's steps into the combo (unreadable ones disabled, their problem as tooltip);
// returns the index of `select`, else of the newest readable step, else −1.
int CheckpointsPage::fillSteps(const checkpoint::Listing& listing, const QString& select) {
    const QSignalBlocker block(step_);
    step_->clear();
    auto* model = qobject_cast<QStandardItemModel*>(step_->model());
    for (const checkpoint::StepEntry& s : listing.steps) {
        const QString name = q(s.name);
        step_->addItem(name, QDir(root_).filePath(name));
        if (!s.meta) {
            model->item(step_->count() - 1)->setEnabled(false);
            step_->setItemData(step_->count() - 1, q(s.problem), Qt::ToolTipRole);
        }
    }
    latest_ = q(listing.latest);
    updateStepNames();
    int index = step_->findData(QDir(root_).filePath(select.isEmpty() ? latest_ : select));
    if (index >= 0 && !model->item(index)->isEnabled()) index = -1;
    for (int i = step_->count(); index < 0 && i-- > 0;)
        if (model->item(i)->isEnabled()) index = i;
    return index;
}

bool CheckpointsPage::openFolder(const QString& path) {
    clearCheckpoint();
    pathLabel_->setText(path);
    // A step folder opens within its checkpoint folder, with that step selected.
    QString select;
    root_ = path;
    if (QFileInfo(QDir(path).filePath(QStringLiteral("metadata.json"))).exists()) {
        root_ = QFileInfo(path).absolutePath();
        select = QFileInfo(path).fileName();
    }
    checkpoint::Listing listing;
    try {
        listing = checkpoint::listCheckpoints(root_.toStdString());
    } catch (const std::exception& e) {
        const QSignalBlocker block(step_);
        step_->clear();
        return refuse(q(e.what()));
    }
    const int index = fillSteps(listing, select);
    if (!listing.temps.empty())
        summary_->setToolTip(tr("%n interrupted save(s) left over (ignored by loading)", nullptr,
                                static_cast<int>(listing.temps.size())));
    if (index < 0) // every step's metadata is damaged: name the newest's problem
        return refuse(listing.steps.empty() ? tr("it holds no complete step")
                                            : q(listing.steps.back().name) + QStringLiteral(": ") +
                                                  q(listing.steps.back().problem));
    {
        const QSignalBlocker block(step_);
        step_->setCurrentIndex(index);
    }
    openStep(step_->itemData(index).toString());
    return error_.isEmpty();
}

bool CheckpointsPage::selectStep(const QString& stepName) {
    const int i = step_->findData(QDir(root_).filePath(stepName));
    if (i < 0) return false;
    if (i == step_->currentIndex())
        openStep(step_->itemData(i).toString());
    else
        step_->setCurrentIndex(i);
    return error_.isEmpty();
}

void CheckpointsPage::setTarget(int ranks, plan::Strategy strategy, int hybridGroup) {
    {
        const QSignalBlocker b1(ranks_), b2(strategy_), b3(hybrid_);
        ranks_->setValue(ranks);
        strategy_->setCurrentIndex(std::max(0, strategy_->findData(static_cast<int>(strategy))));
        if (hybridGroup > 0) hybrid_->setValue(hybridGroup);
    }
    replan();
}

void CheckpointsPage::openStep(const QString& dir) {
    ++generation_;
    opened_.reset();
    meta_.reset();
    checks_.clear();
    verifyError_.clear();
    showMessage({});
    try {
        opened_ = checkpoint::openCheckpoint(dir.toStdString());
        meta_ = std::make_shared<const checkpoint::Metadata>(opened_->meta);
    } catch (const std::exception& e) {
        opened_.reset();
        showMessage(tr("Cannot read this step: %1").arg(q(e.what())));
    }
    replan();
    startVerification();
}

void CheckpointsPage::replan() {
    plan_.reset();
    hybrid_->setEnabled(
        plan::policyFor(static_cast<plan::Strategy>(strategy_->currentData().toInt()))
            .usesHybridGroup());
    if (meta_) {
        try {
            const auto s = static_cast<plan::Strategy>(strategy_->currentData().toInt());
            plan_ = std::make_shared<const LoadPlan>(
                planLoad(*meta_, s, ranks_->value(), hybrid_->isEnabled() ? hybrid_->value() : 0));
            if (targetProblem_) showMessage({});
            targetProblem_ = false;
        } catch (const std::exception& e) {
            showMessage(tr("Cannot load at this target: %1").arg(q(e.what())));
            targetProblem_ = true;
        }
    }
    view_->setPlan(plan_, plan_ ? meta_ : nullptr);
    fillReads();
    fillFiles();
    updateSummary();
}

void CheckpointsPage::startVerification() {
    if (!opened_) return;
    verifying_ = true;
    const std::uint64_t generation = generation_;
    auto result = std::make_shared<std::vector<checkpoint::FileCheck>>();
    auto error = std::make_shared<std::string>();
    // Re-hashing reads every byte of the step: never on the UI thread.
    QThread* thread = QThread::create([opened = *opened_, result, error] {
        try {
            *result = checkpoint::verifyFiles(opened);
        } catch (const std::exception& e) {
            *error = e.what();
        }
    });
    connect(thread, &QThread::finished, thread, &QObject::deleteLater);
    connect(thread, &QThread::finished, this, [this, generation, result, error] {
        if (generation != generation_) return;
        verifying_ = false;
        checks_ = std::move(*result);
        verifyError_ = q(*error);
        fillFiles();
        updateSummary();
    });
    thread->start();
    fillFiles();
}

std::optional<ResumeChoice> CheckpointsPage::resumeChoice() const {
    if (!opened_ || !meta_ || !plan_) return std::nullopt;
    const runconfig::ModelPreset* preset = presetWithShape(meta_->shape);
    if (!preset) return std::nullopt;
    ResumeChoice c;
    c.path = q(opened_->dir);
    c.model = q(preset->name);
    c.ranks = plan_->newWorld;
    c.strategy = plan_->newStrategy;
    c.hybridGroup = plan_->hybridGroup;
    c.seed = meta_->seed;
    c.precision = plan::parsePrecision(meta_->precision).value_or(plan::PrecisionKind::MixedBf16);
    c.microBatch =
        meta_->microBatch != preset->microBatch ? static_cast<int>(meta_->microBatch) : 0;
    return c;
}

void CheckpointsPage::changeEvent(QEvent* event) {
    if (event->type() == QEvent::LanguageChange) retranslateUi();
    QWidget::changeEvent(event);
}

} // namespace shardscope::widgets
