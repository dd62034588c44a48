#pragma once
// The Ranks page's test fixture, shared by the tests of the page (ranks_page_test) and of its
// run controls (ranks_run_control_test): a page over its own document, live jobs with the
// built worker where it and mpirun exist, and the /proc helpers that check nothing is left.
#include "launch/mpirun.h"
#include "launch/process_tree.h"
#include "ranks/ranks_page.h"
#include "synthetic_stream.h"

#include <QFileInfo>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <algorithm>
#include <csignal>
#include <fstream>

using namespace shardscope;
using namespace shardscope::widgets;
using shardscope::launch::descendantPids;
using shardscope::launch::ProcessId;

namespace {

const QString kWorker = QStringLiteral(SHARDSCOPE_BIN_DIR "/shardscope-worker");
const QString kCli = QStringLiteral(SHARDSCOPE_BIN_DIR
                                    "/shardscope-cli"); // RunSession's default: beside this binary

// Why live jobs cannot run here (as threads, or under mpirun), or empty when they can.
inline QString missingForThreads() {
    if (!QFileInfo(kCli).isExecutable())
        return QStringLiteral("build/bin/shardscope-cli is missing: build the shardscope-cli "
                              "target to run live jobs");
    if (!QFileInfo(kWorker).isExecutable())
        return QStringLiteral(
            "build/bin/shardscope-worker is missing: build the worker target to run live jobs");
    return {};
}

inline QString missingForMpirun() {
    if (QString why = missingForThreads(); !why.isEmpty()) return why;
    if (!launch::findExecutable("mpirun"))
        return QStringLiteral("mpirun is not on PATH: install OpenMPI to run live jobs");
    return {};
}

// QSKIP returns from the test function, so skipping on a missing prerequisite is a macro.
#define SKIP_IF_MISSING(why)                                                                       \
    do {                                                                                           \
        if (const QString reason = (why); !reason.isEmpty()) QSKIP(qPrintable(reason));            \
    } while (false)

inline RunRequest tinyRequest(int steps) {
    RunRequest r;
    r.model = QStringLiteral("tiny");
    r.ranks = 2;
    r.steps = steps;
    return r;
}

inline RunRequest tinyThreadsRequest(int steps) {
    RunRequest r = tinyRequest(steps);
    r.threads = true;
    return r;
}

// The executable name the kernel reports for a process ("" once it is gone).
inline std::string processName(pid_t pid) {
    std::ifstream comm("/proc/" + std::to_string(pid) + "/comm");
    std::string name;
    comm >> name;
    return name;
}

inline bool allGone(const std::vector<ProcessId>& tree) {
    return std::none_of(tree.begin(), tree.end(),
                        [](const ProcessId& p) { return ::kill(p.pid, 0) == 0; });
}

struct PageOwned {
    RunDocument document;
    QTemporaryDir dir; // the recordings the test writes
    int files = 0;
};

// A Ranks page over its own document, with a spy on runEnded: what every test drives.
// Note: PageOwned is the first base so the document and the recordings outlive the page
// that refers to them; the spy, a member, goes before both.
class TestPage : private PageOwned, public RanksPage {
public:
    TestPage() : RanksPage(document) {}
    using PageOwned::document;

    // Writes bytes as a new recording file; returns its path.
    QString saveRecording(const std::string& bytes) {
        const QString path = dir.filePath(QStringLiteral("run%1.sstrace").arg(++files));
        std::ofstream(path.toStdString(), std::ios::binary) << bytes;
        return path;
    }
    QString saveRecording(const testing::SyntheticRun& run = testing::SyntheticRun{}) {
        return saveRecording(testing::syntheticStream(run));
    }

    // Waits for the page's current job or recording to end; returns the outcome.
    RunSession::Outcome waitForEnd(int timeoutMs) {
        if (ended.isEmpty()) ended.wait(timeoutMs);
        if (ended.isEmpty()) return RunSession::Outcome::Failed;
        return ended.takeFirst().at(0).value<RunSession::Outcome>();
    }

    QSignalSpy ended{this, &RanksPage::runEnded};
};

// A page that starts real jobs with the built worker.
class LivePage : public TestPage {
public:
    LivePage() { session().setWorkerPath(kWorker); }
};

} // namespace
