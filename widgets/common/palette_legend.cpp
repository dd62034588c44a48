#include "common/palette_legend.h"

#include <QEvent>

namespace shardscope::widgets {

PaletteLegend::PaletteLegend(std::initializer_list<ColorFamily> families, QWidget* parent)
    : QLabel(parent), families_(families) {
    setObjectName(QStringLiteral("paletteLegend"));
    setTextFormat(Qt::RichText);
    setWordWrap(true);
    setSizePolicy(QSizePolicy::Ignored,
                  QSizePolicy::Maximum); // never widens the page, never takes spare height
    retranslateUi();
}

void PaletteLegend::retranslateUi() {
    QString text = tr("Colours here:");
    bool first = true;
    for (ColorFamily f : families_) {
        text += first ? QStringLiteral(" ") : QStringLiteral(" · ");
        first = false;
        const std::vector<QColor> colors = familyColors(f);
        // A few swatches spread over the family, then its name.
        for (std::size_t i = 0; i < 4 && !colors.empty(); ++i)
            text += QStringLiteral("<span style=\"color:%1\">&#9632;</span>")
                        .arg(colors[i * colors.size() / 5].name());
        text += QStringLiteral(" ") + familyName(f).toHtmlEscaped();
    }
    setText(QStringLiteral("<small>") + text + QStringLiteral("</small>"));
}

void PaletteLegend::changeEvent(QEvent* event) {
    if (event->type() == QEvent::LanguageChange) retranslateUi();
    QLabel::changeEvent(event);
}

} // namespace shardscope::widgets
