#include "playback/explain_panel.h"

#include "playback/explain_text.h"
#include "playback/glossary_terms.h"

#include <QCursor>
#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QTextBrowser>
#include <QToolButton>
#include <QToolTip>
#include <QVBoxLayout>

namespace shardscope::widgets {
namespace {
const QString kScheme = QStringLiteral("glossary:");
}

ExplainPanel::ExplainPanel(QWidget* parent) : QWidget(parent) {
    title_ = new QLabel(this);
    QFont bold = title_->font();
    bold.setBold(true);
    title_->setFont(bold);
    text_ = new QLabel(this);
    text_->setWordWrap(true);
    text_->setTextFormat(Qt::RichText);
    text_->setTextInteractionFlags(Qt::LinksAccessibleByMouse | Qt::LinksAccessibleByKeyboard);
    text_->setMinimumHeight(text_->fontMetrics().height() * 2 + 6);
    connect(text_, &QLabel::linkHovered, this, &ExplainPanel::onLinkHovered);
    connect(text_, &QLabel::linkActivated, this, [this](const QString& link) {
        if (link.startsWith(kScheme)) showGlossary(link.mid(kScheme.size()));
    });
    toggle_ = new QToolButton(this);
    toggle_->setCheckable(true);
    connect(toggle_, &QToolButton::toggled, this, [this](bool on) { glossary_->setVisible(on); });
    glossary_ = new QTextBrowser(this);
    glossary_->setOpenLinks(false);
    glossary_->setVisible(false);
    glossary_->setMinimumHeight(120);

    auto* head = new QHBoxLayout;
    head->setContentsMargins(0, 0, 0, 0);
    head->addWidget(title_);
    head->addStretch(1);
    head->addWidget(toggle_);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 4, 6, 4);
    layout->addLayout(head);
    layout->addWidget(text_);
    layout->addWidget(glossary_, 1);
    retranslateUi();
}

void ExplainPanel::setModel(const replay::ReplayModel* model) {
    model_ = model;
    position_ = 0;
    refreshText();
}

void ExplainPanel::setPosition(std::uint64_t index) {
    position_ = index;
    refreshText();
}

void ExplainPanel::setFocusRank(int rank) {
    if (rank == focusRank_) return;
    focusRank_ = rank;
    refreshText();
}

std::optional<std::uint64_t> ExplainPanel::describedEvent() const {
    if (!model_ || !model_->info() || position_ == 0 || model_->eventCount() == 0)
        return std::nullopt;
    if (focusRank_ >= 0) return Explain::eventForRank(*model_, position_, focusRank_);
    return std::min(position_, model_->eventCount()) - 1;
}

QString ExplainPanel::sentenceHtml() const {
    return Glossary::linkTerms(sentence_, Glossary::entries());
}

bool ExplainPanel::glossaryVisible() const {
    return toggle_->isChecked();
}

void ExplainPanel::showGlossary(const QString& id) {
    toggle_->setChecked(true);
    if (!id.isEmpty()) glossary_->scrollToAnchor(id);
}

void ExplainPanel::refreshText() {
    if (!model_ || !model_->info()) {
        sentence_ = Explain::tr("No events yet: start a run or open a recording.");
    } else {
        sentence_ = focusRank_ >= 0
                        ? Explain::explainForRank(*model_, position_, *model_->info(), focusRank_)
                        : Explain::explain(*model_, position_, *model_->info());
    }
    text_->setText(sentenceHtml());
}

void ExplainPanel::onLinkHovered(const QString& link) {
    if (!link.startsWith(kScheme)) {
        QToolTip::hideText();
        return;
    }
    const auto entries = Glossary::entries();
    if (const GlossaryEntry* g = Glossary::find(entries, link.mid(kScheme.size())))
        QToolTip::showText(QCursor::pos(),
                           QStringLiteral("<b>%1</b><br>%2")
                               .arg(g->term.toHtmlEscaped(), g->definition.toHtmlEscaped()),
                           text_);
}

void ExplainPanel::changeEvent(QEvent* event) {
    if (event->type() == QEvent::LanguageChange) retranslateUi();
    QWidget::changeEvent(event);
}

void ExplainPanel::retranslateUi() {
    title_->setText(tr("What is happening"));
    toggle_->setText(tr("Glossary"));
    toggle_->setToolTip(
        tr("Show the ZeRO / FSDP terms used here; terms in the sentence link to their entries"));
    glossary_->setHtml(Glossary::html(Glossary::entries()));
    refreshText();
}

} // namespace shardscope::widgets
