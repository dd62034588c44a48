#include "app/screenshot.h"

#include "calculator/calculator_page.h"
#include "common/chart_export.h"
#include "core/user_files.h"
#include "ranks/ranks_page.h"

#include <QApplication>
#include <QBuffer>
#include <QFileInfo>
#include <QImage>
#include <QImageWriter>
#include <QPixmap>
#include <QSaveFile>
#include <QWidget>
#include <cerrno>

namespace shardscope::widgets {
namespace {

// Suffix → the Qt image format written; only formats this Qt build can write are offered.
QByteArray formatFor(const QString& file) {
    const QString suffix = QFileInfo(file).suffix().toLower();
    QByteArray format;
    if (suffix == QLatin1String("png"))
        format = "png";
    else if (suffix == QLatin1String("jpg") || suffix == QLatin1String("jpeg"))
        format = "jpeg";
    else if (suffix == QLatin1String("bmp"))
        format = "bmp";
    return QImageWriter::supportedImageFormats().contains(format) ? format : QByteArray();
}

} // namespace

QString screenshotFormatError(const QString& file) {
    if (!formatFor(file).isEmpty()) return {};
    QStringList offered;
    for (const char* f : {"png", "jpeg", "bmp"})
        if (QImageWriter::supportedImageFormats().contains(f))
            offered << (QStringLiteral(".") +
                        QString::fromLatin1(f == QByteArray("jpeg") ? "jpg" : f));
    return QApplication::translate("Screenshot",
                                   "cannot write a screenshot as '%1': the name must end in %2")
        .arg(QFileInfo(file).fileName(), offered.join(QStringLiteral(", ")));
}

bool renderScreenshot(QWidget& window, const QString& file, QSize size, QString* error) {
    window.setAttribute(Qt::WA_DontShowOnScreen);
    window.resize(size);
    window.show();
    // Pages coalesce recomputes on a timer; a screenshot must show the final state.
    for (CalculatorPage* page : window.findChildren<CalculatorPage*>())
        page->recomputeNow();
    QApplication::processEvents();
    for (RanksPage* page : window.findChildren<RanksPage*>())
        page->finishPendingDraws();
    QApplication::processEvents();
    QApplication::processEvents();
    const QImage image = window.grab().toImage();
    if (image.size() != size) {
        *error = QApplication::translate("Screenshot", "rendered %1×%2 instead of %3×%4")
                     .arg(image.width())
                     .arg(image.height())
                     .arg(size.width())
                     .arg(size.height());
        return false;
    }
    const QByteArray format = formatFor(file);
    if (format.isEmpty()) {
        *error = screenshotFormatError(file);
        return false;
    }
    if (const QString problem = ChartExport::outputProblem(file); !problem.isEmpty()) {
        *error = problem;
        return false;
    }
    // Encoded in memory first: the image writer reports a failed write as "Unknown error"
    // (libpng's "Write Error"); written from memory, the file's own error names the cause
    // ("No space left on device").
    QByteArray bytes;
    QBuffer buffer(&bytes);
    buffer.open(QIODevice::WriteOnly);
    if (!image.save(&buffer, format.constData())) {
        *error = QApplication::translate("Screenshot", "cannot encode the image as %1")
                     .arg(QString::fromLatin1(format));
        return false;
    }
    // The system's reason, taken where the write fails: QSaveFile's own after a failed flush or
    // commit is "Unknown error".
    QSaveFile out(file);
    errno = 0;
    bool written = out.open(QIODevice::WriteOnly) && out.write(bytes) == bytes.size();
    int err = written ? 0 : errno;
    if (written && !out.flush()) {
        err = errno;
        written = false;
    }
    if (written && !out.commit()) {
        err = errno;
        written = false;
    }
    if (!written) {
        *error =
            QApplication::translate("Screenshot", "cannot write %1: %2")
                .arg(file, err != 0 ? QString::fromStdString(ioErrorText(err)) : out.errorString());
        return false;
    }
    return true;
}

} // namespace shardscope::widgets
