#include "common/chart_export.h"

#include "common/qcustomplot.h"
#include "core/error.h"
#include "core/user_files.h"

#include <QFileInfo>
#include <QImage>
#include <QPageSize>
#include <QPainter>
#include <QPdfWriter>
#include <QSaveFile>
#include <QSvgGenerator>
#include <QWidget>
#include <functional>

namespace shardscope::widgets {
namespace {

// Paints onto the export device; `vector` is true for SVG and PDF (no pixel caching).
using PaintFn = std::function<bool(QPaintDevice&, QSize, bool vector)>;

bool fail(QString* error, const QString& message) {
    if (error) *error = message;
    return false;
}

// Renders through `paint` into `path` in the chosen format, atomically.
bool write(const QString& path, ExportFormat format, QSize size, const PaintFn& paint,
           QString* error) {
    if (size.isEmpty())
        return fail(error, ChartExport::tr("nothing to export: the view has no size"));
    if (const QString problem = ChartExport::outputProblem(path); !problem.isEmpty())
        return fail(error, problem);
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly))
        return fail(error, ChartExport::tr("cannot write %1: %2").arg(path, file.errorString()));
    switch (format) {
    case ExportFormat::Png: {
        // Twice the on-screen resolution: exported charts end up in slides and papers.
        QImage image(size * 2, QImage::Format_ARGB32_Premultiplied);
        image.setDevicePixelRatio(2);
        image.fill(Qt::white);
        if (!paint(image, size, false))
            return fail(error, ChartExport::tr("cannot paint %1").arg(path));
        if (!image.save(&file, "PNG"))
            return fail(error, ChartExport::tr("cannot encode %1 as PNG").arg(path));
        break;
    }
    case ExportFormat::Svg: {
        QSvgGenerator svg;
        svg.setOutputDevice(&file);
        svg.setSize(size);
        svg.setViewBox(QRect(QPoint(0, 0), size));
        svg.setTitle(QStringLiteral("ShardScope"));
        if (!paint(svg, size, true))
            return fail(error, ChartExport::tr("cannot start an SVG document for %1").arg(path));
        break;
    }
    case ExportFormat::Pdf: {
        QPdfWriter pdf(&file);
        pdf.setCreator(QStringLiteral("ShardScope"));
        pdf.setResolution(96);
        pdf.setPageMargins(QMarginsF(0, 0, 0, 0));
        pdf.setPageSize(QPageSize(QSizeF(size.width() * 72.0 / 96, size.height() * 72.0 / 96),
                                  QPageSize::Point));
        if (!paint(pdf, size, true))
            return fail(error, ChartExport::tr("cannot start a PDF document for %1").arg(path));
        break;
    }
    }
    if (!file.commit())
        return fail(error, ChartExport::tr("cannot write %1: %2").arg(path, file.errorString()));
    return true;
}

} // namespace

std::optional<ExportFormat> ChartExport::formatFor(const QString& path) {
    const QString suffix = QFileInfo(path).suffix().toLower();
    if (suffix == QLatin1String("png")) return ExportFormat::Png;
    if (suffix == QLatin1String("svg")) return ExportFormat::Svg;
    if (suffix == QLatin1String("pdf")) return ExportFormat::Pdf;
    return std::nullopt;
}

QString ChartExport::fileFilter() {
    return tr("PNG image (*.png)") + QStringLiteral(";;") + tr("SVG drawing (*.svg)") +
           QStringLiteral(";;") + tr("PDF document (*.pdf)");
}

bool ChartExport::exportWidget(QWidget& widget, const QString& path, QString* error) {
    const auto format = formatFor(path);
    if (!format) return fail(error, tr("%1: use a .png, .svg or .pdf file name").arg(path));
    // A plot exports through its own painter, so axes and text stay vectors in SVG and PDF.
    if (auto* plot = qobject_cast<QCustomPlot*>(&widget)) return exportPlot(*plot, path, error);
    widget.ensurePolished();
    if (widget.size().isEmpty()) widget.adjustSize();
    return write(
        path, *format, widget.size(),
        [&widget](QPaintDevice& device, QSize, bool) {
            QPainter p;
            if (!p.begin(&device)) return false;
            widget.render(&p, QPoint(), QRegion(),
                          QWidget::DrawWindowBackground | QWidget::DrawChildren);
            return p.end();
        },
        error);
}

bool ChartExport::exportPlot(QCustomPlot& plot, const QString& path, QString* error, QSize size) {
    const auto format = formatFor(path);
    if (!format) return fail(error, tr("%1: use a .png, .svg or .pdf file name").arg(path));
    if (size.isEmpty()) size = plot.size();
    return write(
        path, *format, size,
        [&plot](QPaintDevice& device, QSize s, bool vector) {
            QCPPainter p;
            if (!p.begin(&device)) return false;
            if (vector) p.setMode(QCPPainter::pmVectorized);
            plot.toPainter(&p, s.width(), s.height());
            return p.end();
        },
        error);
}

QString ChartExport::outputProblem(const QString& path, const QStringList& inputs) {
    // QSaveFile writes beside its target and renames over it: over a FIFO or a link to a device
    // that would replace the special file itself.
    try {
        checkOutputPath(path.toStdString(), "output");
        std::vector<std::pair<std::string, std::string>> named{{"output", path.toStdString()}};
        for (const QString& in : inputs)
            named.emplace_back("input", in.toStdString());
        checkDistinctFiles(named);
    } catch (const Error& e) {
        return tr("cannot write %1: %2").arg(path, QString::fromUtf8(e.what()));
    }
    return {};
}

} // namespace shardscope::widgets
