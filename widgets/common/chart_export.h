#pragma once
// Exports a chart (QCustomPlot) or any widget to PNG, SVG or PDF, chosen by the file's suffix.
// Writes go through QSaveFile: a failure leaves no partial file, and an existing file is only
// replaced once the new one is complete.
#include <QCoreApplication>
#include <QSize>
#include <QString>
#include <QStringList>
#include <optional>

class QCustomPlot;
class QWidget;

namespace shardscope::widgets {

enum class ExportFormat { Png, Svg, Pdf };

class ChartExport {
    Q_DECLARE_TR_FUNCTIONS(ChartExport)
public:
    static std::optional<ExportFormat>
    formatFor(const QString& path); // by suffix, case-insensitive
    static QString fileFilter();    // for QFileDialog: "PNG image (*.png);;SVG …"

    // The widget as it is laid out now (size: its current size). Returns false with a one-line
    // reason in *error.
    static bool exportWidget(QWidget& widget, const QString& path, QString* error);
    // A QCustomPlot through its own vector painter (crisp SVG/PDF); size 0 = its current size.
    static bool exportPlot(QCustomPlot& plot, const QString& path, QString* error, QSize size = {});

    // Why the GUI must not write `path` (empty when it may): a folder, a special file or a link
    // to one (a FIFO, /dev/null), a missing folder, or the same file as one of `inputs` (the
    // recording a screenshot is made of). The one check of every file the GUI writes.
    static QString outputProblem(const QString& path, const QStringList& inputs = {});
};

} // namespace shardscope::widgets
