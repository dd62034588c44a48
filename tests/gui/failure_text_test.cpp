// A worker's or the launcher's message in the UI's language: each form, fed the text its source
// really writes (the ledger's out-of-memory, the launcher's endings), reads in Chinese with the
// run's byte units, keeps every number, and a message of another form is shown as written.
#include "common/byte_format.h"
#include "common/failure_text.h"
#include "common/language.h"
#include "core/error.h"
#undef emit // core/ledger.h has a member of that name; this test emits no signal
#include "core/ledger.h"
#include "launch/ending.h"

#include <QTest>
#include <csignal>

using namespace shardscope;
using namespace shardscope::widgets;

namespace {

std::string outOfMemory() {
    Ledger ledger(3);
    ledger.setUnitNames({"embedding", "block0", "block1"});
    ledger.setCapacity(Tier::Device, 1600000);
    ledger.recordAlloc(Category::MasterFp32, Tier::Device, 1551048, 0);
    try {
        ledger.recordAlloc(Category::Activation, Tier::Device, 102400, 2);
    } catch (const Error& e) {
        return e.what();
    }
    return {};
}

// What the launcher itself writes as a cause (launch::classify).
std::string endingCause(void (*set)(launch::JobEvidence&)) {
    launch::JobEvidence e;
    e.stallTimeout = std::chrono::seconds(60);
    set(e);
    return launch::classify(e).cause;
}

} // namespace

class FailureTextTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void everyFormReadsInChinese() {
        LanguageManager language;
        QVERIFY(language.setLanguage(QStringLiteral("zh_CN")));
        const std::string oom = outOfMemory();
        QVERIFY(!oom.empty());
        const QStringList sources = {
            QString::fromStdString(oom),
            QString::fromStdString(
                endingCause([](launch::JobEvidence& e) { e.stopRequested = true; })),
            QString::fromStdString(
                endingCause([](launch::JobEvidence& e) { e.interruptSignal = SIGTERM; })),
            QString::fromStdString(endingCause([](launch::JobEvidence& e) {
                e.stalled = true;
                e.stoppedRanks = {1};
            })),
            QString::fromStdString(endingCause([](launch::JobEvidence& e) { e.stalled = true; })),
            // The communicators' deadlines (comm/mpi_communicator.cpp,
            // comm/shared_device_communicator.h) and a rank thread that never came
            // (app/worker/shared_job.cpp), as they write them.
            QStringLiteral("all-gather on rank 2 timed out after 30 s waiting for its peers"),
            QStringLiteral("rank 1: reduce-scatter timed out after 5000 ms waiting for rank(s) 3"),
            QStringLiteral("rank 0: all-reduce can never complete: rank 2 has left the group"),
            QStringLiteral("rank 2 left the group while its peers waited in a collective"),
            QStringLiteral("it did not arrive at the all-gather (rank 0 waited 5000 ms)"),
            QStringLiteral("it did not arrive at the all-gather of block1 (nor did rank 3)"),
            QStringLiteral("it stopped inside the reduce-scatter of block0"),
            QStringLiteral("interrupted by SIGTERM after step 4"),
        };
        for (const QString& english : sources) {
            const QString zh = failureText(english);
            QVERIFY2(zh != english, qPrintable(english));
            // Every rank, step and count of the source survives the translation.
            static const QRegularExpression number(QStringLiteral("\\d+"));
            for (auto it = number.globalMatch(english); it.hasNext();) {
                const QString n = it.next().captured(0);
                if (n.size() > 4) continue; // byte counts are reformatted (below)
                QVERIFY2(zh.contains(n), qPrintable(english + QStringLiteral(" → ") + zh));
            }
        }
        const QString zhOom = failureText(oom);
        QVERIFY2(zhOom.contains(formatDecimal(102400)) && zhOom.contains(formatDecimal(1600000)) &&
                     zhOom.contains(formatDecimal(1551048)) &&
                     zhOom.contains(QStringLiteral("block1")),
                 qPrintable(zhOom));
        QVERIFY2(!zhOom.contains(QStringLiteral("out of memory")), qPrintable(zhOom));
        // A buffer of no unit in particular is named in the UI's words too.
        Ledger bare(0);
        bare.setCapacity(Tier::Device, 10);
        try {
            bare.recordAlloc(Category::Workspace, Tier::Device, 100, kNoUnit);
            QFAIL("the allocation fitted");
        } catch (const Error& e) {
            const QString zh = failureText(std::string(e.what()));
            QVERIFY2(!zh.contains(QStringLiteral("no unit")), qPrintable(zh));
        }
        // A message of no known form is shown as written.
        const QString other =
            QStringLiteral("NAME: the GPU refused 4096 bytes (0 of 80 bytes free)");
        QCOMPARE(failureText(other), other);
        QVERIFY(language.setLanguage(QStringLiteral("en")));
        QVERIFY2(failureText(oom).contains(QStringLiteral("out of device memory on rank 3")),
                 qPrintable(failureText(oom)));
    }
};

QTEST_MAIN(FailureTextTest)
#include "failure_text_test.moc"
