#pragma once
// The explain panel: the sentence for the playhead (Explain::explain) with its ZeRO/FSDP terms
// linked to the glossary. Hovering a term shows its definition; clicking opens the glossary
// below at that entry.
#include "replay/replay_model.h"

#include <QWidget>
#include <optional>

class QLabel;
class QTextBrowser;
class QToolButton;

namespace shardscope::widgets {

class ExplainPanel : public QWidget {
    Q_OBJECT
public:
    explicit ExplainPanel(QWidget* parent = nullptr);

    void setModel(const replay::ReplayModel* model); // not owned
    void setPosition(std::uint64_t index);
    // The rank the sentence follows (the playback bar's focus rank); −1: whichever rank logged
    // last.
    void setFocusRank(int rank);
    int focusRank() const { return focusRank_; }
    QString sentence() const { return sentence_; } // plain text
    // The event the sentence is about (its index in the model), if it is about one.
    std::optional<std::uint64_t> describedEvent() const;
    QString sentenceHtml() const; // with glossary links
    bool glossaryVisible() const;
    void showGlossary(const QString& id = {}); // opens the glossary (at an entry)

protected:
    void changeEvent(QEvent* event) override;

private:
    void refreshText();
    void retranslateUi();
    void onLinkHovered(const QString& link);

    const replay::ReplayModel* model_ = nullptr;
    std::uint64_t position_ = 0;
    int focusRank_ = 0;
    QString sentence_;
    QLabel* title_ = nullptr;
    QLabel* text_ = nullptr;
    QToolButton* toggle_ = nullptr;
    QTextBrowser* glossary_ = nullptr;
};

} // namespace shardscope::widgets
