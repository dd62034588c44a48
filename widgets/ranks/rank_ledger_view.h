#pragma once
// One column per rank: a stacked bar of live bytes by ledger category (the shared palette),
// the rank's peak so far, the theory's predicted peak and an optional capacity line, and
// beneath each bar a strip of the model's units showing which are gathered right now. Bars
// glide to new heights (exponential smoothing per frame) so a replay reads as motion.
// Past kCompactAbove ranks the layout drops per-rank text and keeps the bars.
// A run with bytes on the host or NVMe tier (offload) splits each column into a bar per tier,
// side by side: the capacity budget and the predicted peak are lines over the device bars only,
// and each tier bar has the theory's model states for that tier as a bracket beside it.
// A pipeline's ranks are grouped by stage (a band above the bars naming each stage's units):
// each stage's predicted peak is a line over its own columns, and a unit strip marks the units
// another stage holds.
#include "ranks/tier_theory.h"
#include "replay/run_data.h"

#include <QColor>
#include <QPoint>
#include <QRect>
#include <QStringList>
#include <QTimer>
#include <QWidget>
#include <optional>
#include <utility>
#include <vector>

namespace shardscope::widgets {

class RankLedgerView : public QWidget {
    Q_OBJECT
public:
    explicit RankLedgerView(QWidget* parent = nullptr);

    void setRunInfo(std::shared_ptr<const replay::RunInfo> info);
    void setState(const replay::LedgerState& state);
    // The byte value the plot's top stands for; constant during a replay so bars don't rescale.
    void setScaleBytes(std::uint64_t bytes);
    void setFailure(std::optional<replay::FailureInfo> failure);
    void clear();
    // Jumps the animation to its target (screenshots, tests, seeking while paused).
    void settle();

    const replay::LedgerState& state() const { return state_; }
    std::uint64_t scaleBytes() const { return scale_; }
    bool isCompact() const;
    // The tiers with a bar of their own (device first; one entry: no split).
    const std::vector<Tier>& shownTiers() const { return tiers_; }
    // The theory `rank` is drawn against: its pipeline stage's (nullptr when none can be sized).
    const TierTheory* tierTheory(int rank) const;
    // Where the bar of `tier` for `rank` is drawn (full plot height; empty when not shown), the
    // bytes it shows of a category, and the capacity line's y (nullopt without a budget).
    QRect tierBarRect(int rank, Tier tier) const;
    double shownBytes(int rank, Category c, Tier tier) const;
    std::optional<int> capacityY() const;
    // The tallest thing the theory draws (each tier's predicted peak): the page's scale covers it.
    std::uint64_t theoryTallest() const;
    static constexpr int kCompactAbove = 16;

    QSize minimumSizeHint() const override { return {320, 240}; }

Q_SIGNALS:
    void rankClicked(int rank);

protected:
    void mousePressEvent(QMouseEvent* event) override;
    void paintEvent(QPaintEvent* event) override;
    bool event(QEvent* event) override;

public:
    QRect plotArea() const; // where the bars are drawn (tests: a usable height at 1024×700)

private:
    struct Geometry;
    Geometry geometry() const;
    void paintLegend(QPainter& p, const QRect& area) const;
    void paintAxis(QPainter& p, const Geometry& g) const;
    void paintTensorGroups(QPainter& p, const Geometry& g) const;
    void paintStages(QPainter& p, const Geometry& g) const;
    void paintStageTints(QPainter& p, const Geometry& g) const;
    static QColor otherStageColor(); // a unit strip's cell of another stage's unit
    int stageCount() const;          // the pipeline's stages drawn as groups (1: none)
    int tensorGroups() const;        // TP groups drawn as frames (0: none)
    std::uint64_t stagePredictedPeak(int stage) const;
    void paintColumn(QPainter& p, const Geometry& g, int rank) const;
    void paintTierBar(QPainter& p, const Geometry& g, int rank, std::size_t slot) const;
    QStringList legendLabels() const;
    std::vector<QRect> legendItems(int width) const;
    QString unitKeyLead() const;
    std::vector<std::pair<QColor, QString>> unitKeys() const;
    void updateTiers();
    void paintUnits(QPainter& p, const QRect& strip, int rank, const replay::RankState& s) const;
    void paintGuides(QPainter& p, const Geometry& g) const;
    int yFor(const Geometry& g, double bytes) const;
    QString activityText(const replay::RankState& s) const;
    QString failureText() const; // empty without a failure
    QString tooltipFor(int rank) const;
    // A stage's units: "block2 … head", its chunks joined by " + " with virtual stages.
    QString stageUnitsText(int stage) const;
    int rankAt(QPoint pos) const;
    void animate();

    std::shared_ptr<const replay::RunInfo> info_;
    replay::LedgerState state_;
    using Shown = std::array<std::array<double, kTierCount>, kCategoryCount>;
    std::vector<Shown> shown_;         // animated bytes per rank, category, tier
    std::vector<TierTheory> theories_; // per pipeline stage (one without a pipeline)
    std::vector<Tier> tiers_{Tier::Device};
    std::uint64_t scale_ = 1;
    std::optional<replay::FailureInfo> failure_;
    QTimer frame_;
};

} // namespace shardscope::widgets
