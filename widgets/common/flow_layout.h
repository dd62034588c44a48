#pragma once
// A layout that places its widgets left to right and wraps them onto further lines, so a row
// of badges or chips grows downwards instead of widening the window.
#include <QLayout>
#include <QList>

namespace shardscope::widgets {

class FlowLayout : public QLayout {
public:
    explicit FlowLayout(QWidget* parent = nullptr, int hSpacing = 6, int vSpacing = 4);
    ~FlowLayout() override;

    void addItem(QLayoutItem* item) override;
    void insertWidget(int index, QWidget* widget);
    int count() const override { return static_cast<int>(items_.size()); }
    QLayoutItem* itemAt(int index) const override;
    QLayoutItem* takeAt(int index) override;
    Qt::Orientations expandingDirections() const override { return {}; }
    bool hasHeightForWidth() const override { return true; }
    int heightForWidth(int width) const override;
    QSize minimumSize() const override; // the widest single item: never the sum
    QSize sizeHint() const override;
    void setGeometry(const QRect& rect) override;

private:
    int place(const QRect& rect, bool apply) const;
    QList<QLayoutItem*> items_;
    int hSpacing_, vSpacing_;
};

} // namespace shardscope::widgets
