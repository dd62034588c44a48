#pragma once
// The collective at the playhead, drawn as data moving between ranks: sources on top, what each
// rank ends with below, one column per rank, a line per chunk coloured by the rank that owns
// it, with dots travelling as the collective progresses.
//   all-gather:     each owner's shard → chunk j of every rank's full buffer;
//   reduce-scatter: chunk j of every rank's full gradient → summed into owner j's shard;
//   all-reduce:     every rank's gradient → the same sum on every rank (DDP).
//   TP all-reduce:  each TP rank's partial sum → the full activation on every rank of its group.
// On a T × D mesh the columns are ordered by the groups the collective ran in (TP groups of
// consecutive ranks, or DP groups striding across them), each group framed: who talks to whom.
// Beneath, each rank's place in the unit's unshard → compute → reshard cycle.
#include "common/category_palette.h"
#include "replay/flow_state.h"

#include <QWidget>

namespace shardscope::widgets {

class FlowView : public QWidget {
    Q_OBJECT
public:
    explicit FlowView(QWidget* parent = nullptr);

    // Which collective the view shows: the one at the playhead, or the nearest tensor-parallel
    // all-reduce / data-parallel collective (an all-gather when the run has one: ZeRO's unshard).
    enum class Pick : std::uint8_t { Playhead, TensorParallel, DataParallel };
    void setPick(Pick pick);
    Pick pick() const { return pick_; }

    void setModel(const replay::ReplayModel* model); // not owned
    void refresh();                                  // the model grew
    void setPosition(std::uint64_t index);           // state after events [0, index)
    const replay::FlowState& state() const { return state_; }
    std::uint64_t position() const { return position_; }

    static QString cycleLabel(replay::UnitCycle c, Phase phase);
    QString title() const;             // what the picture shows, one line
    QString rankLabel(int rank) const; // the rank's state under its column
    // A pipeline's rank of a stage with no rank in the collective's groups: its stage (it runs
    // other units, in a sequence of its own); −1 for a stage that takes part, or without a
    // pipeline.
    int otherStage(int rank) const;
    std::int64_t stepsBefore() const; // a resumed run's: its labels count on (step_number.h)
    static QColor cycleColor(replay::UnitCycle c);

    // What the last paint had the room to draw besides the diagram (it never overprints).
    struct PaintStats {
        bool subtitle = false; // the bytes moved (lessons quote them)
        bool chain = false;    // the cycle's states under the pills
    };
    const PaintStats& lastPaintStats() const { return stats_; }

    QSize sizeHint() const override { return {900, 460}; }
    QSize minimumSizeHint() const override; // grows with the font (presentation mode)

protected:
    void paintEvent(QPaintEvent* event) override;
    void changeEvent(QEvent* event) override;

private:
    struct Layout;
    struct ChainItem {
        replay::UnitCycle cycle;
        QString text;
        bool bold; // some rank is in this state
    };
    struct Chain {
        QString lead;
        std::vector<ChainItem> items;
    };
    Chain chain() const;
    int chainLines(const QFont& font, double width) const;
    static QFont titleFont(const QFont& body);
    static double diagramHeight(const QFontMetrics& fm);
    static double cycleBlockHeight(const QFontMetrics& fm, int chainLineCount);
    QString unitName(std::int32_t unit) const;
    QString subject() const; // what the collective moves: a unit, a bucket, the gradient norm
    QString emptyText() const;
    QString subtitle() const;
    void paintRow(QPainter& p, const Layout& l, bool top) const;
    void paintLinks(QPainter& p, const Layout& l) const;
    void paintCycle(QPainter& p, const Layout& l, bool withChain) const;
    void paintGroups(QPainter& p, const Layout& l) const;
    Layout layoutFor(const QRectF& area, double body, double cycleBlock,
                     const QFontMetrics& fm) const;
    QString rowCaption(bool top) const;
    QString groupCaption(std::size_t g) const;
    std::ptrdiff_t pickedGroup(std::uint64_t index) const;
    double chunkFill(int holder, int chunk, bool top) const;

    const replay::ReplayModel* model_ = nullptr;
    replay::FlowIndex index_;
    replay::FlowState state_;
    std::uint64_t position_ = 0;
    Pick pick_ = Pick::Playhead;
    PaintStats stats_;
    bool hasAllGather_ = false; // the recording has ZeRO's all-gathers (else DDP: all-reduces)
};

} // namespace shardscope::widgets
