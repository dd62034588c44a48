#pragma once
// One line at the top of a page saying which colour families (common/category_palette.h) the
// page draws with, so a reader knows blue here means a memory category, not an activity.
#include "common/category_palette.h"

#include <QLabel>
#include <vector>

namespace shardscope::widgets {

class PaletteLegend : public QLabel {
    Q_OBJECT
public:
    PaletteLegend(std::initializer_list<ColorFamily> families, QWidget* parent = nullptr);
    const std::vector<ColorFamily>& families() const { return families_; }

protected:
    void changeEvent(QEvent* event) override;

private:
    void retranslateUi();
    std::vector<ColorFamily> families_;
};

} // namespace shardscope::widgets
