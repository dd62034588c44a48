#include "app/pages.h"

#include "app/config_files.h"
#include "app/main_window.h"
#include "app/presentation.h"
#include "app/recording_files.h"
#include "calculator/calculator_page.h"
#include "checkpoints/checkpoints_page.h"
#include "compare/compare_page.h"
#include "compare/compare_view.h"
#include "flows/flow_page.h"
#include "lessons/lesson_player.h"
#include "ranks/ranks_page.h"
#include "run/run_config_panel.h"
#include "run/run_document.h"
#include "timeline/timeline_page.h"

namespace shardscope::widgets {

void addDefaultPages(MainWindow& window) {
    RunDocument& document = window.document();
    auto* ranks = new RanksPage(document);
    window.addPage(
        QStringLiteral("ranks"), [] { return MainWindow::tr("Ranks"); }, ranks);
    window.addFileAction(ranks->openAction());
    auto* timeline = new TimelinePage(document);
    auto* flows = new FlowPage(document);
    window.addPage(
        QStringLiteral("timeline"), [] { return TimelinePage::tr("Timeline"); }, timeline);
    window.addPage(
        QStringLiteral("flows"), [] { return FlowPage::tr("Flows"); }, flows);
    for (ReplayPageBase* page :
         {static_cast<ReplayPageBase*>(timeline), static_cast<ReplayPageBase*>(flows)})
        QObject::connect(&window.presentation(), &Presentation::presentingChanged, page,
                         &ReplayPageBase::setPresenting);
    auto* compare = new ComparePage;
    window.addPage(
        QStringLiteral("compare"), [] { return ComparePage::tr("Compare"); }, compare);
    // The Ranks page's run joins the comparison when the user adds it, never on its own.
    QObject::connect(&document.session(), &RunSession::reportReady, compare,
                     [compare](const RunReportPtr& r) { compare->setCurrentReport(r); });
    QObject::connect(&document.session(), &RunSession::started, compare,
                     [compare] { compare->setCurrentReport(nullptr); });
    new RecordingFiles(window, document);
    new ConfigFiles(window, document, *ranks->configPanel());
    auto* calculator = new CalculatorPage;
    window.addPage(
        QStringLiteral("calculator"), [] { return MainWindow::tr("Calculator"); }, calculator);
    QObject::connect(&window.presentation(), &Presentation::presentingChanged, calculator,
                     &CalculatorPage::setPresenting);
    auto* checkpoints = new CheckpointsPage;
    window.addPage(
        QStringLiteral("checkpoints"), [] { return CheckpointsPage::tr("Checkpoints"); },
        checkpoints);
    window.addFileAction(checkpoints->openAction());
    // "Resume a run from here": the run settings take the step and the target world.
    QObject::connect(checkpoints, &CheckpointsPage::resumeRequested, ranks,
                     [&window, ranks](const ResumeChoice& c) {
                         ranks->configPanel()->setRequest(
                             resumeRequest(ranks->configPanel()->request(), c));
                         window.showPage(QStringLiteral("ranks"));
                     });
    QObject::connect(&window.presentation(), &Presentation::presentingChanged, ranks,
                     &RanksPage::setPresenting);
    QObject::connect(&window.presentation(), &Presentation::presentingChanged, compare->view(),
                     &CompareView::setPresenting);
    new LessonPlayer(window); // Help → Lessons, over the pages above
}

} // namespace shardscope::widgets
