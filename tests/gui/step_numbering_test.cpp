// One step numbering, counted from 1, on every surface that names a step: the Ranks page's
// position, progress and failure banner, the playback bar, the explain sentences, the loss
// chart's axis, the timeline's step labels. The stream counts from 0 (core/step_number.h).
#include "common/qcustomplot.h"
#include "common/run_labels.h"
#include "core/step_number.h"
#include "playback/explain_text.h"
#include "playback/playback_bar.h"
#include "ranks/ranks_page.h"
#include "ranks/run_timeline_charts.h"
#include "replay/timeline_index.h"
#include "run/replay_player.h"
#include "synthetic_stream.h"
#include "timeline/timeline_paint.h"
#include "timeline_test_recording.h"

#include <QPainter>
#include <QProgressBar>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <fstream>

using namespace shardscope;
using namespace shardscope::widgets;
using namespace shardscope::replay;

class StepNumberingTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { qRegisterMetaType<RunSession::Outcome>(); }

    void everySurfaceCountsFromOne() {
        testrec::Spec spec;
        spec.steps = 2;
        const auto m = testrec::loadModel(testrec::makeRecording(spec));
        QCOMPARE(m->step(0).step, std::int64_t{0}); // the stream's numbering
        QCOMPARE(displayStep(m->step(0).step), std::int64_t{1});

        // Explain: the first step's boundaries are step 1's.
        const std::uint64_t begin = testrec::findEvent(
            *m, 0, [](const Event& e) { return e.kind == EventKind::StepBegin; });
        QCOMPARE(Explain::explain(*m, begin + 1, *m->info()),
                 QStringLiteral("Rank 0 begins step 1."));
        const std::uint64_t end2 = testrec::findEvent(
            *m, 1, [](const Event& e) { return e.kind == EventKind::StepEnd; }, 1);
        QCOMPARE(Explain::explain(*m, end2 + 1, *m->info()),
                 QStringLiteral("Rank 1 finishes step 2."));

        // Playback bar: the first event is in step 1, the last in step 2.
        ReplayPlayer player(*m);
        PlaybackBar bar(*m, player);
        player.seek(1);
        QVERIFY2(bar.positionText().endsWith(QStringLiteral("step 1")),
                 qPrintable(bar.positionText()));
        player.seek(m->eventCount());
        QVERIFY2(bar.positionText().endsWith(QStringLiteral("step 2")),
                 qPrintable(bar.positionText()));

        // Loss chart: one point per step at x = 1 and 2.
        LossChart loss;
        loss.appendSteps(m->steps());
        QCOMPARE(loss.pointCount(), 2);
        QCOMPARE(loss.plot()->graph(0)->data()->at(0)->key, 1.0);
        QCOMPARE(loss.plot()->graph(0)->data()->at(1)->key, 2.0);

        // Timeline: the boundaries are labelled step 1 and step 2.
        TimelineIndex index;
        index.update(*m);
        QImage image(900 + TimelineGeometry::kGutter, 400, QImage::Format_ARGB32_Premultiplied);
        TimelineScene scene;
        scene.index = &index;
        scene.model = m.get();
        scene.window = TimeWindow{0, static_cast<double>(index.endNs()), 1};
        QPainter p(&image);
        const TimelinePaintStats stats = TimelinePainter::paint(p, image.rect(), scene);
        QCOMPARE(stats.stepLabels,
                 (std::vector<QString>{QStringLiteral("step 1"), QStringLiteral("step 2")}));

        QCOMPARE(failureWhen(0), QStringLiteral("in step 1"));
    }

    // A recording cut short in its second step: the banner, the position and the progress all
    // say step 2, and the progress counts the one finished step.
    void failedStepIsTheSameNumberOnTheRanksPage() {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("failed.sstrace"));
        std::ofstream(path.toStdString(), std::ios::binary)
            << testing::syntheticStream({.failRank = 1});
        RunDocument document;
        RanksPage page(document);
        QSignalSpy ended(&page, &RanksPage::runEnded);
        QVERIFY(page.openRecording(path));
        QTRY_COMPARE_WITH_TIMEOUT(ended.size(), 1, 10000);
        QVERIFY2(page.bannerText().contains(QStringLiteral("in step 2")),
                 qPrintable(page.bannerText()));
        const auto* progress = page.findChild<QProgressBar*>(QStringLiteral("runProgress"));
        QCOMPARE(progress->text(), QStringLiteral("1 of 2 steps done"));
    }
};

QTEST_MAIN(StepNumberingTest)
#include "step_numbering_test.moc"
