#pragma once
// Batch rendering for `shardscope --screenshot`: the window at a fixed size, offscreen, to PNG.
#include <QSize>
#include <QString>

class QWidget;

namespace shardscope::widgets {

inline constexpr QSize kScreenshotSize{1400, 900};

// Lays out and paints `window` at `size`, finishing any pending recompute first, and writes a
// PNG atomically (no partial file on failure). Returns false with a one-line reason.
bool renderScreenshot(QWidget& window, const QString& file, QSize size, QString* error);

} // namespace shardscope::widgets
