#pragma once
// The collective at the playhead, drawn as data moving between ranks: sources on top, what each
// rank ends with below, one column per rank, a line per chunk coloured by the rank that owns
// it, with dots travelling as the collective progresses.
//   all-gather:     each owner's shard → chunk j of every rank's full buffer;
//   reduce-scatter: chunk j of every rank's full gradient → summed into owner j's shard;
//   all-reduce:     every rank's gradient → the same sum on every rank (DDP).
// Beneath, each rank's place in the unit's unshard → compute → reshard cycle.
#include <QWidget>

#include "common/category_palette.h"
#include "replay/flow_state.h"

namespace shardscope::widgets {

class FlowView : public QWidget {
    Q_OBJECT
public:
    explicit FlowView(QWidget* parent = nullptr);

    void setModel(const replay::ReplayModel* model); // not owned
    void refresh();                          // the model grew
    void setPosition(std::uint64_t index);   // state after events [0, index)
    const replay::FlowState& state() const { return state_; }
    std::uint64_t position() const { return position_; }

    static QString cycleLabel(replay::UnitCycle c, Phase phase);
    QString title() const; // what the picture shows, one line
    static QColor cycleColor(replay::UnitCycle c);

    QSize sizeHint() const override { return {900, 460}; }
    QSize minimumSizeHint() const override { return {420, 260}; }

protected:
    void paintEvent(QPaintEvent* event) override;
    void changeEvent(QEvent* event) override;

private:
    struct Layout;
    QString unitName(std::int32_t unit) const;
    QString subject() const; // what the collective moves: a unit, a bucket, the gradient norm
    QString emptyText() const;
    QString subtitle() const;
    void paintRow(QPainter& p, const Layout& l, bool top) const;
    void paintLinks(QPainter& p, const Layout& l) const;
    void paintCycle(QPainter& p, const Layout& l) const;
    double chunkFill(int holder, int chunk, bool top) const;

    const replay::ReplayModel* model_ = nullptr;
    replay::FlowIndex index_;
    replay::FlowState state_;
    std::uint64_t position_ = 0;
};

} // namespace shardscope::widgets
