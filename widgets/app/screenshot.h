#pragma once
// Batch rendering for `shardscope --screenshot`: the window at a fixed size, offscreen, to the
// image format the file's suffix names (PNG, JPEG or BMP).
#include <QSize>
#include <QString>

class QWidget;

namespace shardscope::widgets {

inline constexpr QSize kScreenshotSize{1400, 900};

// Empty when `file`'s suffix names a format the screenshot can write; otherwise one line saying
// which suffixes it takes (checked before anything runs).
QString screenshotFormatError(const QString& file);

// Lays out and paints `window` at `size`, finishing any pending recompute first, and writes the
// image in the suffix's format atomically (no partial file on failure). Returns false with a
// one-line reason.
bool renderScreenshot(QWidget& window, const QString& file, QSize size, QString* error);

} // namespace shardscope::widgets
