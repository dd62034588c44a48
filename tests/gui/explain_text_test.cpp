// The explain panel's sentences for known events of a ZeRO-3 and a DDP recording, and the
// glossary links in them.
#include "common/byte_format.h"
#include "common/language.h"
#include "playback/explain_panel.h"
#include "playback/explain_text.h"
#include "playback/glossary_terms.h"
#include "timeline_test_recording.h"

#include <QLabel>
#include <QTest>
#include <fstream>
#include <sstream>

using namespace shardscope;
using namespace shardscope::widgets;
using namespace shardscope::replay;

namespace {

QString sentenceFor(const ReplayModel& m, int rank, const std::function<bool(const Event&)>& pred) {
    const std::uint64_t i = testrec::findEvent(m, rank, pred);
    if (i >= m.eventCount()) return QStringLiteral("<no such event>");
    return Explain::explain(m, i + 1, *m.info());
}

QString kb(std::uint64_t b) {
    return formatDecimal(static_cast<double>(b));
}

} // namespace

class ExplainTextTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void zero3Sentences() {
        testrec::Spec spec;
        const auto m = testrec::loadModel(testrec::makeRecording(spec));
        const QString full = kb(testrec::fullBytes(spec)), shard = kb(testrec::shardBytes(spec));
        QCOMPARE(Explain::explain(*m, 0, *m->info()),
                 QStringLiteral("The run has not started yet: press Play or step forward."));
        // Unit 2 is "block1" (embedding, block0, block1, head).
        QCOMPARE(sentenceFor(*m, 2,
                             [](const Event& e) {
                                 return e.kind == EventKind::CollectiveBegin &&
                                        e.collective == CollectiveOp::AllGather && e.unit == 2;
                             }),
                 QStringLiteral("Rank 2 all-gathers block1: 4 shards of %1 become %2 of full "
                                "parameters, freed after its forward.")
                     .arg(shard, full));
        // Its second all-gather serves the backward.
        const std::uint64_t agBwd = testrec::findEvent(
            *m, 1,
            [](const Event& e) {
                return e.kind == EventKind::CollectiveBegin &&
                       e.collective == CollectiveOp::AllGather && e.unit == 2;
            },
            1);
        QCOMPARE(Explain::explain(*m, agBwd + 1, *m->info()),
                 QStringLiteral("Rank 1 all-gathers block1: 4 shards of %1 become %2 of full "
                                "parameters, freed after its backward.")
                     .arg(shard, full));
        QCOMPARE(sentenceFor(*m, 0,
                             [](const Event& e) {
                                 return e.kind == EventKind::Free &&
                                        e.category == Category::ParamFull && e.unit == 1;
                             }),
                 QStringLiteral("Rank 0 reshards block0: it frees %1 of full parameters and keeps "
                                "only its %2 shard.")
                     .arg(full, shard));
        QCOMPARE(
            sentenceFor(*m, 3,
                        [](const Event& e) {
                            return e.kind == EventKind::CollectiveBegin &&
                                   e.collective == CollectiveOp::ReduceScatter && e.unit == 0;
                        }),
            QStringLiteral("Rank 3 reduce-scatters embedding's gradients: 4 ranks' %1 gradients "
                           "are summed chunk by chunk, and each rank keeps its %2 shard.")
                .arg(full, shard));
        QCOMPARE(sentenceFor(*m, 0,
                             [](const Event& e) {
                                 return e.kind == EventKind::ComputeBegin &&
                                        e.phase == Phase::Forward && e.unit == 3;
                             }),
                 QStringLiteral("Rank 0 runs head's forward on the gathered full parameters."));
        QCOMPARE(sentenceFor(*m, 2,
                             [](const Event& e) {
                                 return e.kind == EventKind::ComputeBegin &&
                                        e.phase == Phase::Optimizer;
                             }),
                 QStringLiteral("Rank 2 updates only its shard of the parameters with AdamW: its "
                                "optimizer state covers 1/4 of the model."));
        QCOMPARE(
            sentenceFor(*m, 0,
                        [](const Event& e) {
                            return e.kind == EventKind::CollectiveEnd &&
                                   e.collective == CollectiveOp::AllGather && e.unit == 0;
                        }),
            QStringLiteral("Rank 0 holds embedding's full parameters (%1): the unit is unsharded.")
                .arg(full));
        QCOMPARE(sentenceFor(*m, 1,
                             [](const Event& e) {
                                 return e.kind == EventKind::Free &&
                                        e.category == Category::GradFull && e.unit == 3;
                             }),
                 QStringLiteral("Rank 1 frees head's full gradient (%1); only its shard remains.")
                     .arg(full));
        QCOMPARE(sentenceFor(*m, 0,
                             [](const Event& e) {
                                 return e.kind == EventKind::CollectiveBegin &&
                                        e.collective == CollectiveOp::AllReduce;
                             }),
                 QStringLiteral("Rank 0 all-reduces %1 with the other 3 ranks: the gradient norm "
                                "every rank needs to clip alike.")
                     .arg(kb(8)));
        // Every event of the run gets a sentence naming its rank.
        for (std::uint64_t i = 0; i < m->eventCount(); ++i) {
            const QString s = Explain::explain(*m, i + 1, *m->info());
            QVERIFY2(s.startsWith(QStringLiteral("Rank %1 ").arg(m->event(i).rank)), qPrintable(s));
        }
    }

    // A real offloaded run (ZeRO-3, optimizer on NVMe, params on the host): each transfer is
    // narrated with why it happens there.
    void transferSentences() {
        std::ifstream in(QT_TESTCASE_SOURCEDIR "/../data/offload_nvme_tiny_2r.sstrace",
                         std::ios::binary);
        std::ostringstream bytes;
        bytes << in.rdbuf();
        const auto m = testrec::loadModel(bytes.str());
        const auto begin = [](Transfer t, std::int32_t unit) {
            return [t, unit](const Event& e) {
                return e.kind == EventKind::TransferBegin && e.transfer == t && e.unit == unit &&
                       e.step == 0;
            };
        };
        const QString down = sentenceFor(*m, 0, begin(Transfer::DeviceToHost, 1));
        QVERIFY2(
            down.startsWith(QStringLiteral("Rank 0 copies its reduced gradient shard of block0 (")),
            qPrintable(down));
        QVERIFY2(down.contains(QStringLiteral("its reduce-scatter is done")), qPrintable(down));
        const QString up = sentenceFor(*m, 1, begin(Transfer::HostToDevice, 0));
        QVERIFY2(up.startsWith(QStringLiteral("Rank 1 brings its parameter shard of embedding (")),
                 qPrintable(up));
        const QString read = sentenceFor(*m, 0, begin(Transfer::NvmeRead, 2));
        QVERIFY2(read.contains(QStringLiteral(
                     "from NVMe; the read is in flight while block0 updates on the CPU.")),
                 qPrintable(read));
        const QString write = sentenceFor(*m, 0, begin(Transfer::NvmeWrite, 1));
        QVERIFY2(
            write.startsWith(QStringLiteral("Rank 0 writes block0's updated optimizer state (")),
            qPrintable(write));
        const QString done = sentenceFor(*m, 0, [](const Event& e) {
            return e.kind == EventKind::TransferEnd && e.transfer == Transfer::NvmeRead &&
                   e.step == 0;
        });
        QVERIFY2(done.startsWith(QStringLiteral("Rank 0 sees the NVMe read of ")) &&
                     done.endsWith(QStringLiteral(" GB/s.")),
                 qPrintable(done));
        for (std::uint64_t i = 0; i < m->eventCount(); ++i) {
            const QString s = Explain::explain(*m, i + 1, *m->info());
            QVERIFY2(s.startsWith(QStringLiteral("Rank %1 ").arg(m->event(i).rank)), qPrintable(s));
        }
    }

    void ddpSentences() {
        testrec::Spec spec;
        spec.ddp = true;
        spec.ranks = 2;
        const auto m = testrec::loadModel(testrec::makeRecording(spec));
        QCOMPARE(
            sentenceFor(*m, 1,
                        [](const Event& e) {
                            return e.kind == EventKind::ComputeBegin && e.phase == Phase::Optimizer;
                        }),
            QStringLiteral("Rank 1 updates all parameters with AdamW, as every other rank does."));
        QCOMPARE(
            sentenceFor(*m, 0,
                        [](const Event& e) {
                            return e.kind == EventKind::CollectiveBegin &&
                                   e.collective == CollectiveOp::AllReduce && e.unit == 1;
                        }),
            QStringLiteral(
                "Rank 0 all-reduces block0's gradients (%1): every rank ends with the same sum.")
                .arg(kb(testrec::fullBytes(spec))));
    }

    // A DDP bucket spanning units names no unit, yet it is gradients, not the gradient norm.
    void ddpFusedBucketIsNotTheGradientNorm() {
        testrec::Spec spec;
        spec.ddp = true;
        spec.fusedAllReduce = true;
        spec.ranks = 2;
        const auto m = testrec::loadModel(testrec::makeRecording(spec));
        const auto all = static_cast<std::uint64_t>(spec.units) * testrec::fullBytes(spec);
        const QString bucket = sentenceFor(*m, 0, [&](const Event& e) {
            return e.kind == EventKind::CollectiveBegin &&
                   e.collective == CollectiveOp::AllReduce && e.bytes == all;
        });
        QCOMPARE(bucket, QStringLiteral("Rank 0 all-reduces a bucket of several units' gradients "
                                        "(%1): every rank ends with the same sum.")
                             .arg(kb(all)));
        QCOMPARE(sentenceFor(*m, 0,
                             [](const Event& e) {
                                 return e.kind == EventKind::CollectiveBegin &&
                                        e.collective == CollectiveOp::AllReduce && e.bytes == 8;
                             }),
                 QStringLiteral("Rank 0 all-reduces %1 with the other 1 ranks: the gradient norm "
                                "every rank needs to clip alike.")
                     .arg(kb(8)));
    }

    void glossaryLinksTerms() {
        const auto entries = Glossary::entries();
        QVERIFY(Glossary::find(entries, QStringLiteral("reduce-scatter")));
        QVERIFY(Glossary::find(entries, QStringLiteral("param_full")));
        for (const char* id :
             {"unit", "shard", "all-gather", "reshard", "reduce-scatter", "all-reduce", "prefetch"})
            QVERIFY2(Glossary::find(entries, QString::fromLatin1(id)), id);
        // "reshards" links to reshard, not to shard inside it; "shard" later still links once.
        const QString html = Glossary::linkTerms(
            QStringLiteral("Rank 0 reshards x: keeps only its <1> shard."), entries);
        QVERIFY2(html.contains(QStringLiteral("<a href=\"glossary:reshard\">reshard</a>s")),
                 qPrintable(html));
        QVERIFY2(html.contains(QStringLiteral("<a href=\"glossary:shard\">shard</a>.")),
                 qPrintable(html));
        QVERIFY2(html.contains(QStringLiteral("&lt;1&gt;")), qPrintable(html)); // escaped
        QCOMPARE(html.count(QStringLiteral("<a ")), 2);
        const QString ag =
            Glossary::linkTerms(QStringLiteral("Rank 2 all-gathers block1"), entries);
        QVERIFY2(ag.contains(QStringLiteral("glossary:all-gather")), qPrintable(ag));
    }

    void chineseAfterLoadingTheTranslator() {
        testrec::Spec spec;
        const auto m = testrec::loadModel(testrec::makeRecording(spec));
        const std::uint64_t ag = testrec::findEvent(*m, 2, [](const Event& e) {
            return e.kind == EventKind::CollectiveBegin &&
                   e.collective == CollectiveOp::AllGather && e.unit == 2;
        });
        const QString english = Explain::explain(*m, ag + 1, *m->info());
        LanguageManager language;
        QVERIFY(language.setLanguage(QStringLiteral("zh_CN")));
        const QString chinese = Explain::explain(*m, ag + 1, *m->info());
        QVERIFY2(chinese != english, qPrintable(chinese));
        QVERIFY2(chinese.contains(QStringLiteral("分片")) &&
                     chinese.contains(QStringLiteral("block1")) &&
                     chinese.contains(formatDecimal(static_cast<double>(testrec::fullBytes(spec)))),
                 qPrintable(chinese));
        // Every sentence of the run is translated (no English "Rank … " left), and the
        // glossary links its Latin terms in Chinese too.
        for (std::uint64_t i = 1; i <= m->eventCount(); ++i)
            QVERIFY2(!Explain::explain(*m, i, *m->info()).startsWith(QStringLiteral("Rank ")),
                     qPrintable(Explain::explain(*m, i, *m->info())));
        QVERIFY(Glossary::linkTerms(chinese, Glossary::entries())
                    .contains(QStringLiteral("glossary:all-gather")));
        QVERIFY(language.setLanguage(QStringLiteral("en")));
        QCOMPARE(Explain::explain(*m, ag + 1, *m->info()), english);
    }

    void panelFollowsThePosition() {
        const auto m = testrec::loadModel(testrec::makeRecording({}));
        ExplainPanel panel;
        panel.setModel(m.get());
        const std::uint64_t rs = testrec::findEvent(*m, 0, [](const Event& e) {
            return e.kind == EventKind::CollectiveBegin &&
                   e.collective == CollectiveOp::ReduceScatter;
        });
        panel.setPosition(rs + 1);
        QCOMPARE(panel.sentence(), Explain::explain(*m, rs + 1, *m->info()));
        QVERIFY(panel.sentenceHtml().contains(QStringLiteral("glossary:reduce-scatter")));
        QVERIFY(!panel.glossaryVisible());
        panel.showGlossary(QStringLiteral("reduce-scatter"));
        QVERIFY(panel.glossaryVisible());
    }

    // "What is happening" narrates the focus rank, not whichever rank logged the last event.
    void narrationFollowsTheFocusRank() {
        const auto m = testrec::loadModel(testrec::makeRecording({})); // 4 ranks
        const std::uint64_t k = testrec::findEvent(*m, 2, [](const Event& e) {
            return e.kind == EventKind::CollectiveBegin &&
                   e.collective == CollectiveOp::AllGather && e.unit == 2;
        });
        QVERIFY(Explain::explain(*m, k + 1, *m->info()).startsWith(QStringLiteral("Rank 2 ")));
        ExplainPanel panel;
        panel.setModel(m.get());
        panel.setPosition(k + 1);
        QCOMPARE(panel.focusRank(), 0);
        QVERIFY2(panel.sentence().startsWith(QStringLiteral("Rank 0 ")),
                 qPrintable(panel.sentence()));
        panel.setFocusRank(2);
        QCOMPARE(panel.sentence(), Explain::explain(*m, k + 1, *m->info()));
        panel.setFocusRank(3);
        QVERIFY2(panel.sentence().startsWith(QStringLiteral("Rank 3 ")),
                 qPrintable(panel.sentence()));
    }
};

QTEST_MAIN(ExplainTextTest)
#include "explain_text_test.moc"
