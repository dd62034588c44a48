#pragma once
// The resharding picture: for every unit, the saved shards (one coloured range per saved file,
// then the padding the saving world added), the reads each new rank makes (one lane per new
// rank, each read coloured by the file it comes from), and the new shards (one range per new
// rank, then the new padding). Element ranges are drawn on one axis per unit, so a read sits
// exactly under the saved range it comes from and above the new shard it fills. Hovering a
// range names its bytes. Only the visible units are laid out, so thousands of units scroll.
#include "checkpoints/load_plan.h"

#include <QCoreApplication>
#include <QWidget>
#include <memory>
#include <vector>

namespace shardscope::widgets {

class ReshardView : public QWidget {
    Q_OBJECT
public:
    explicit ReshardView(QWidget* parent = nullptr);

    // `meta` must outlive the view's use of it (the page keeps both); null clears the view.
    void setPlan(std::shared_ptr<const LoadPlan> plan,
                 std::shared_ptr<const checkpoint::Metadata> meta);
    const LoadPlan* plan() const { return plan_.get(); }

    enum class Kind { Saved, SavedPadding, Read, Owned, NewPadding };
    struct Item {
        Kind kind;
        std::size_t unit;
        QRectF rect;
        QColor fill;
        QString label;        // drawn inside when it fits
        QString tooltip;      // translated
        int newRank = -1;     // Read, Owned
        std::size_t file = 0; // Saved, Read
        std::uint64_t begin = 0, end = 0;
    };
    // The drawn ranges of one unit at the view's current width (tests, tooltips).
    std::vector<Item> itemsOfUnit(std::size_t unit) const;
    int unitBlockHeight() const;
    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    void paintEvent(QPaintEvent* event) override;
    bool event(QEvent* event) override;

private:
    int laneHeight() const;
    QString unitTitle(const UnitLoadPlan& u) const;

    std::shared_ptr<const LoadPlan> plan_;
    std::shared_ptr<const checkpoint::Metadata> meta_;
};

} // namespace shardscope::widgets
