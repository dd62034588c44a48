#include "app/screenshot.h"

#include <QApplication>
#include <QImage>
#include <QPixmap>
#include <QSaveFile>
#include <QWidget>

#include "calculator/calculator_page.h"
#include "ranks/ranks_page.h"

namespace shardscope::widgets {

bool renderScreenshot(QWidget& window, const QString& file, QSize size, QString* error) {
    window.setAttribute(Qt::WA_DontShowOnScreen);
    window.resize(size);
    window.show();
    // Pages coalesce recomputes on a timer; a screenshot must show the final state.
    for (CalculatorPage* page : window.findChildren<CalculatorPage*>()) page->recomputeNow();
    QApplication::processEvents();
    for (RanksPage* page : window.findChildren<RanksPage*>()) page->finishPendingDraws();
    QApplication::processEvents();
    QApplication::processEvents();
    const QImage image = window.grab().toImage();
    if (image.size() != size) {
        *error = QApplication::translate("Screenshot", "rendered %1×%2 instead of %3×%4")
                     .arg(image.width()).arg(image.height()).arg(size.width()).arg(size.height());
        return false;
    }
    QSaveFile out(file);
    if (!out.open(QIODevice::WriteOnly) || !image.save(&out, "PNG") || !out.commit()) {
        *error = QApplication::translate("Screenshot", "cannot write %1: %2").arg(file, out.errorString());
        return false;
    }
    return true;
}

} // namespace shardscope::widgets
