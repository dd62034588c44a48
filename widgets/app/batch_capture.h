#pragma once
// Batch mode for screenshots of the Ranks page: run the default scenario until K steps have
// streamed in (`--run-default --after-steps K`) or open a recording (`--open FILE`), then
// leave the page showing the busiest moment of that step, ready for renderScreenshot().
#include <QString>

namespace shardscope::widgets {

class RanksPage;

struct BatchRequest {
    bool runDefault = false;
    int afterSteps = 0; // 0: the last step available
    QString openPath;
    int timeoutSeconds = 300;
};

// Blocks in a local event loop; returns an empty string on success, else one line saying why.
QString prepareBatch(RanksPage& page, const BatchRequest& request);

} // namespace shardscope::widgets
