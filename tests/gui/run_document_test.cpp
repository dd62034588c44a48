// The RunDocument is all a replay page needs: the Timeline and Flows pages built over a document,
// with no Ranks page anywhere, follow a recording opened through the document's session and
// share its playhead; the next recording resets the document and the pages with it.
#include "flows/flow_page.h"
#include "flows/flow_view.h"
#include "run/replay_player.h"
#include "run/run_document.h"
#include "timeline/timeline_page.h"
#include "timeline/timeline_view.h"
#include "timeline_test_recording.h"

#include <QElapsedTimer>
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace shardscope;
using namespace shardscope::widgets;

namespace {

bool openAndWait(RunDocument& document, const QString& path) {
    if (!document.session().openRecording(path)) return false;
    QElapsedTimer clock;
    clock.start();
    while (document.session().isActive() && clock.elapsed() < 20000)
        QTest::qWait(20);
    return !document.session().isActive() && document.model().stepCount() > 0;
}

QString writeRecording(const QTemporaryDir& dir, const QString& name, const std::string& bytes) {
    const QString path = dir.filePath(name);
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly)) return {};
    f.write(bytes.data(), static_cast<qint64>(bytes.size()));
    return path;
}

} // namespace

class RunDocumentTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void replayPagesNeedOnlyTheDocument() {
        RunDocument document;
        TimelinePage timeline(document);
        FlowPage flows(document);
        QSignalSpy appended(&document, &RunDocument::stepsAppended);
        QTemporaryDir dir;
        testrec::Spec spec;
        spec.steps = 2;
        QVERIFY(openAndWait(document, writeRecording(dir, QStringLiteral("a.sstrace"),
                                                     testrec::makeRecording(spec))));
        const replay::ReplayModel& m = document.model();
        QCOMPARE(m.stepCount(), std::size_t{2});
        QVERIFY(appended.count() >= 1);
        QCOMPARE(timeline.view()->index().laneCount(), spec.ranks);
        QVERIFY(timeline.view()->index().spanCount() > 0);

        // One playhead: seeking the document's player moves both pages.
        document.player().pause();
        document.player().seek(123);
        QCOMPARE(*timeline.view()->playheadNs(), m.replayNsAt(123));
        QCOMPARE(flows.view()->position(), std::uint64_t{123});
        // A click on the timeline seeks the shared player.
        Q_EMIT timeline.view()->seekRequested(42);
        QCOMPARE(document.player().cursor().index(), std::uint64_t{42});
        QCOMPARE(flows.view()->position(), std::uint64_t{42});

        // The next recording resets the model and the pages with it.
        spec.steps = 1;
        spec.ranks = 2;
        QVERIFY(openAndWait(document, writeRecording(dir, QStringLiteral("b.sstrace"),
                                                     testrec::makeRecording(spec))));
        QCOMPARE(m.stepCount(), std::size_t{1});
        QCOMPARE(m.worldSize(), 2);
        QCOMPARE(timeline.view()->index().laneCount(), 2);
        QVERIFY(document.failures().empty());
    }
};

QTEST_MAIN(RunDocumentTest)
#include "run_document_test.moc"
