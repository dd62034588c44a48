#include "app/batch_capture.h"

#include "ranks/ranks_page.h"

#include <QCoreApplication>
#include <QEventLoop>
#include <QTimer>

namespace shardscope::widgets {
namespace {

// Runs the event loop until `done()` holds, the run ends, or the timeout passes.
bool waitFor(RanksPage& page, int timeoutSeconds, const std::function<bool()>& done) {
    if (done()) return true;
    QEventLoop loop;
    QTimer timeout;
    timeout.setSingleShot(true);
    QObject::connect(&timeout, &QTimer::timeout, &loop, &QEventLoop::quit);
    QObject::connect(&page.document(), &RunDocument::stepsAppended, &loop, [&] {
        if (done()) loop.quit();
    });
    QObject::connect(&page, &RanksPage::runEnded, &loop, &QEventLoop::quit);
    timeout.start(timeoutSeconds * 1000);
    loop.exec();
    return done();
}

} // namespace

QString prepareBatch(RanksPage& page, const BatchRequest& request) {
    const auto steps = [&page] { return static_cast<int>(page.model().stepCount()); };
    if (request.runDefault) {
        RunRequest run = RanksPage::defaultRequest();
        run.steps = std::max(1, request.afterSteps); // the job ends by itself after K steps
        if (!page.runRequest(run)) return page.bannerText();
        const int want = std::max(1, request.afterSteps);
        if (!waitFor(page, request.timeoutSeconds, [&] { return steps() >= want; })) {
            page.stop();
            waitFor(page, RunSession::kGraceMs / 1000 + 5, [&] { return !page.isBusy(); });
            if (!page.bannerText().isEmpty()) return page.bannerText();
            return QCoreApplication::translate(
                       "BatchCapture", "the default run produced %1 of %2 steps within %3 s")
                .arg(steps())
                .arg(want)
                .arg(request.timeoutSeconds);
        }
        // The job ends by itself after its K steps (report, End); stop() only if it lingers,
        // so no rank outlives the screenshot.
        waitFor(page, 30, [&] { return !page.isBusy(); });
        page.stop();
        waitFor(page, RunSession::kGraceMs / 1000 + 5, [&] { return !page.isBusy(); });
        page.showPeakOfStep(static_cast<std::size_t>(want - 1));
    } else if (!request.openPath.isEmpty()) {
        if (!page.openRecording(request.openPath))
            return QCoreApplication::translate("BatchCapture", "cannot open %1")
                .arg(request.openPath);
        waitFor(page, request.timeoutSeconds, [&] { return !page.isBusy(); });
        if (page.isBusy())
            return QCoreApplication::translate("BatchCapture", "reading %1 took longer than %2 s")
                .arg(request.openPath)
                .arg(request.timeoutSeconds);
        // A broken file is bad input even when its first steps decoded (docs/design.md: exit 2).
        if (!page.session().streamError().isEmpty()) return page.bannerText();
        if (steps() == 0)
            return page.bannerText().isEmpty()
                       ? QCoreApplication::translate("BatchCapture", "%1 holds no steps")
                             .arg(request.openPath)
                       : page.bannerText();
        const int last = request.afterSteps > 0 ? std::min(request.afterSteps, steps()) : steps();
        page.showPeakOfStep(static_cast<std::size_t>(last - 1));
    }
    page.finishPendingDraws();
    return {};
}

} // namespace shardscope::widgets
