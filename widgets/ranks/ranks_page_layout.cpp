#include "common/byte_format.h"
#include "common/palette_legend.h"
#include "common/qcustomplot.h"
#include "common/run_labels.h"
#include "common/side_column.h"
#include "common/theory_names.h"
#include "ranks/rank_ledger_view.h"
#include "ranks/ranks_page.h"
#include "ranks/run_theory_charts.h"
#include "ranks/run_timeline_charts.h"
#include "run/replay_player.h"
#include "run/run_config_panel.h"

#include <QAction>
#include <QEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QShortcut>
#include <QSlider>
#include <QSpinBox>
#include <QSplitter>
#include <QStyle>
#include <QTabWidget>
#include <QToolButton>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

// The Ranks page's widgets and layout: the settings on the left; the run's header lines, the
// rank view, the playback controls and the charts on the right.
namespace shardscope::widgets {
namespace {

QLabel* wrapped(QWidget* parent, const QString& objectName) {
    auto* l = new QLabel(parent);
    l->setObjectName(objectName);
    l->setWordWrap(true);
    l->setTextFormat(Qt::RichText);
    return l;
}

} // namespace

QWidget* RanksPage::buildLeft() {
    auto* left = new QWidget;
    auto* v = new QVBoxLayout(left);
    v->setContentsMargins(2, 2, 2, 2);
    settingsTitle_ = new QLabel(left);
    settingsTitle_->setObjectName(QStringLiteral("settingsTitle"));
    settingsTitle_->setWordWrap(true);
    settingsTitle_->setStyleSheet(QStringLiteral("font-weight: bold;"));
    config_ = new RunConfigPanel(left);
    connect(config_, &RunConfigPanel::requestChanged, this, &RanksPage::updateButtons);
    v->addWidget(settingsTitle_);
    v->addWidget(config_);
    v->addStretch(1);
    QScrollArea* column = sideColumn(left);
    putAwayWhilePresenting(column); // a class sees the run; the settings are a click away (F5)
    settingsColumn_ = column;
    return column;
}

QWidget* RanksPage::buildRight() {
    auto* right = new QWidget;
    auto* v = new QVBoxLayout(right);
    v->setContentsMargins(4, 0, 0, 0);
    v->setSpacing(4);
    title_ = wrapped(right, QStringLiteral("runTitle"));
    QFont big = title_->font();
    big.setPointSizeF(13);
    big.setBold(true);
    title_->setFont(big);
    story_ = wrapped(right, QStringLiteral("runStory"));
    putAwayWhilePresenting(story_); // the lesson's text tells the story in front of a class
    savingsLine_ = wrapped(right, QStringLiteral("runSavings"));
    putAwayWhilePresenting(savingsLine_); // its numbers are on the bars and in the lesson's text
    exposedLine_ = wrapped(right, QStringLiteral("runExposed"));
    putAwayWhilePresenting(exposedLine_);
    auto* buttons = new QHBoxLayout;
    runButton_ = new QPushButton(right);
    runButton_->setObjectName(QStringLiteral("runButton"));
    stopButton_ = new QPushButton(right);
    stopButton_->setObjectName(QStringLiteral("stopButton"));
    openButton_ = new QPushButton(right);
    progress_ = new QProgressBar(right);
    progress_->setObjectName(QStringLiteral("runProgress"));
    elapsed_ = new QLabel(right);
    elapsed_->setMinimumWidth(70);
    connect(runButton_, &QPushButton::clicked, this, &RanksPage::runConfigured);
    connect(stopButton_, &QPushButton::clicked, this, &RanksPage::stop);
    connect(openButton_, &QPushButton::clicked, this, &RanksPage::chooseRecording);
    // The settings column folds away, giving the run its width (a 1024 px screen): one click.
    settingsToggle_ = new QToolButton(right);
    settingsToggle_->setObjectName(QStringLiteral("settingsToggle"));
    settingsToggle_->setCheckable(true);
    settingsToggle_->setChecked(true);
    connect(settingsToggle_, &QToolButton::toggled, this,
            [this](bool shown) { settingsColumn_->setVisible(shown); });
    buttons->addWidget(settingsToggle_);
    for (QWidget* w : {static_cast<QWidget*>(runButton_), static_cast<QWidget*>(stopButton_),
                       static_cast<QWidget*>(openButton_)})
        buttons->addWidget(w);
    buttons->addWidget(progress_, 1);
    buttons->addWidget(elapsed_);
    banner_ = wrapped(right, QStringLiteral("runBanner"));
    banner_->setTextFormat(Qt::PlainText);
    banner_->setStyleSheet(QStringLiteral("background: #fdecea; color: #8e1f14; border: 1px solid "
                                          "#e6a49c; padding: 6px; font-weight: bold;"));
    banner_->setVisible(false);
    view_ = new RankLedgerView(right);
    auto* top = new QWidget;
    auto* topLayout = new QVBoxLayout(top);
    topLayout->setContentsMargins(0, 0, 0, 0);
    topLayout->addWidget(view_, 1);
    topLayout->addWidget(buildControls());
    auto* vsplit = new QSplitter(Qt::Vertical);
    vsplit->setObjectName(QStringLiteral("ranksSplit"));
    vsplit->addWidget(top);
    vsplit->addWidget(buildCharts());
    vsplit->setStretchFactor(0, 3); // the rank view first: the charts below have tabs
    vsplit->setStretchFactor(1, 2);
    split_ = vsplit;
    // Run/Stop on top: the header lines below grow as a run reports, and must not move them.
    v->addLayout(buttons);
    for (QWidget* w : {static_cast<QWidget*>(title_), static_cast<QWidget*>(story_),
                       static_cast<QWidget*>(savingsLine_), static_cast<QWidget*>(exposedLine_)})
        v->addWidget(w);
    v->addWidget(banner_);
    v->addWidget(vsplit, 1);
    return right;
}

QWidget* RanksPage::buildControls() {
    auto* bar = new QWidget;
    auto* h = new QHBoxLayout(bar);
    h->setContentsMargins(0, 0, 0, 0);
    playButton_ = new QToolButton(bar);
    playButton_->setObjectName(QStringLiteral("playButton"));
    playButton_->setIcon(style()->standardIcon(QStyle::SP_MediaPlay));
    connect(playButton_, &QToolButton::clicked, this,
            [this] { player_->isPlaying() ? player_->pause() : player_->play(); });
    scrub_ = new QSlider(Qt::Horizontal, bar);
    scrub_->setObjectName(QStringLiteral("scrubSlider"));
    connect(scrub_, &QSlider::sliderMoved, this,
            [this](int v) { player_->seek(static_cast<std::uint64_t>(v)); });
    position_ = new QLabel(bar);
    // Long in some languages: it takes the room left, never widens the page.
    position_->setMinimumWidth(120);
    position_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    speed_ = new QSlider(Qt::Horizontal, bar);
    speed_->setObjectName(QStringLiteral("speedSlider"));
    speed_->setRange(0, 7 * kSpeedSteps); // slow motion 1× … 10,000,000×
    speed_->setValue(3 * kSpeedSteps);
    speed_->setMaximumWidth(140);
    speed_->setInvertedAppearance(true); // right = faster
    connect(speed_, &QSlider::valueChanged, this, [this](int v) {
        speedTouched_ = true;
        setSlowMotionFromSlider(v);
    });
    speedLabel_ = new QLabel(bar);
    speedLabel_->setMinimumWidth(80);
    speedLabel_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    h->addWidget(playButton_);
    h->addWidget(scrub_, 1);
    h->addWidget(position_, 1);
    h->addWidget(speed_);
    h->addWidget(speedLabel_, 1);
    return bar;
}

QWidget* RanksPage::buildCharts() {
    auto* charts = new QWidget;
    auto* v = new QVBoxLayout(charts);
    v->setContentsMargins(0, 0, 0, 0);
    // Which rank the charts follow, and their colours: put away on a projector (a lesson sets the
    // rank; each chart names its colours).
    auto* rankRowWidget = new QWidget(charts);
    putAwayWhilePresenting(rankRowWidget);
    auto* rankRow = new QHBoxLayout(rankRowWidget);
    rankRow->setContentsMargins(0, 0, 0, 0);
    rankLabel_ = new QLabel(charts);
    chartRank_ = new QSpinBox(charts);
    chartRank_->setObjectName(QStringLiteral("chartRank"));
    chartRank_->setRange(0, 0);
    rankRow->addWidget(rankLabel_);
    rankRow->addWidget(chartRank_);
    rankRow->addSpacing(12);
    rankRow->addWidget(new PaletteLegend({ColorFamily::Memory, ColorFamily::Ranks}, charts), 1);
    memory_ = new MemoryTimelineChart;
    loss_ = new LossChart;
    measured_ = new MeasuredVsTheoryChart;
    savings_ = new SavingsChart;
    timeTabs_ = new QTabWidget;
    timeTabs_->addTab(memory_, QString());
    timeTabs_->addTab(loss_, QString());
    // Two panes of tabs, not three charts side by side: each chart keeps a readable width at
    // 1024 px, and the page never asks for more.
    theoryTabs_ = new QTabWidget;
    theoryTabs_->addTab(measured_, QString());
    theoryTabs_->addTab(savings_, QString());
    for (QCustomPlot* plot : {memory_->plot(), loss_->plot(), measured_->plot(), savings_->plot()})
        plot->setMinimumSize(220, 130);
    auto* split = new QSplitter(Qt::Horizontal);
    split->addWidget(timeTabs_);
    split->addWidget(theoryTabs_);
    split->setSizes({500, 500});
    connect(chartRank_, &QSpinBox::valueChanged, this, [this](int r) {
        memory_->setRank(r);
        comparisonTimer_.start();
    });
    connect(view_, &RankLedgerView::rankClicked, chartRank_, &QSpinBox::setValue);
    v->addWidget(rankRowWidget);
    v->addWidget(split, 1);
    return charts;
}

} // namespace shardscope::widgets
