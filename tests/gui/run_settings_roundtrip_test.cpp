// Every run setting survives every path it takes: flag → RunConfig → JSON (a recording's
// handshake) → RunConfig → worker flags → RunConfig → the GUI's run request (a loaded recording
// shown in the panel) → worker flags → RunConfig. The walk is over runconfig::kFields, so a
// setting added to the table without a sample here, or one that a path forgets, fails.
#include "run/run_config_panel.h"
#include "run/run_request.h"
#include "runconfig/build_features.h"
#include "runconfig/config_json.h"
#include "runconfig/fields.h"
#include "runconfig/problems.h"
#include "runconfig/run_config.h"

#include <QLabel>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

using namespace shardscope;
using namespace shardscope::widgets;
using runconfig::Field;
using runconfig::FieldValue;

namespace {

// A value of the field that is not its default, and what it needs beside it.
struct Sample {
    std::string strategy = "zero3";
    std::vector<std::string> flags; // the field's flag and value, with any flag it needs
    int processes = 4;              // mpirun -np (1 with --shared-device)
    std::string model = "tiny";
};

std::string show(const FieldValue& v) {
    return std::holds_alternative<std::monostate>(v) ? "(unset)" : runconfig::fieldText(v);
}

runconfig::RunConfig parse(const std::vector<std::string>& args, int processes) {
    return runconfig::parseRunConfig(args, processes);
}

int processesOf(const runconfig::RunConfig& c) {
    return c.sharedDevice ? 1 : c.worldSize;
}

} // namespace

class RunSettingsRoundTripTest : public QObject {
    Q_OBJECT
private Q_SLOTS:
    void everyFieldSurvivesEveryPath() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const std::string tmp = dir.path().toStdString();
        const std::string data = tmp + "/data.txt";
        std::ofstream(data) << std::string(4096, 'a');
        const std::string checkpoint = SHARDSCOPE_SOURCE_DIR "/tests/data/checkpoint_v2_tiny_2r";
        const std::vector<std::string> nvme = {"--offload-optimizer", "nvme", "--nvme-dir", tmp};

        std::map<Field, Sample> samples = {
            {Field::Model, {"zero3", {"--model", "small"}, 4, ""}},
            {Field::Strategy, {"zero2", {}}},
            {Field::Steps, {"zero3", {"--steps", "7"}}},
            {Field::Seed, {"zero3", {"--seed", "42"}}},
            {Field::Precision, {"zero3", {"--precision", "fp32"}}},
            {Field::Checkpointing, {"zero3", {"--checkpointing"}}},
            {Field::MicroBatch, {"zero3", {"--micro-batch", "3"}}},
            {Field::LearningRate, {"zero3", {"--lr", "0.0025"}}},
            {Field::Deterministic, {"zero3", {"--deterministic"}}},
            {Field::BucketBytes, {"zero2", {"--bucket-bytes", "1MiB"}}},
            {Field::Prefetch, {"zero3", {"--prefetch", "3"}}},
            {Field::ReshardAfterForward, {"fsdp", {"--reshard-after-forward", "0"}}},
            {Field::MaxInflight, {"fsdp", {"--max-inflight", "4"}}},
            {Field::Persistence, {"zero3", {"--persistence-threshold", "1000"}}},
            {Field::HybridGroup, {"fsdp_hybrid", {"--hybrid-group", "2"}}},
            {Field::GradAccum, {"zero3", {"--grad-accum", "2"}}},
            {Field::NoSync, {"fsdp", {"--no-sync"}}},
            {Field::Capacity, {"zero3", {"--capacity", "64MiB"}}},
            {Field::TimeoutMs, {"zero3", {"--timeout-ms", "5000"}}},
            {Field::OffloadOptimizer, {"zero2", {"--offload-optimizer", "host"}}},
            {Field::OffloadParams, {"zero3", {"--offload-params", "host"}}},
            {Field::NvmeDir, {"zero3", nvme}},
            {Field::KeepNvme, {"zero3", {}}},
            {Field::AioBlockBytes, {"zero3", {"--aio-block-bytes", "2MiB"}}},
            {Field::AioQueueDepth, {"zero3", {"--aio-queue-depth", "16"}}},
            {Field::Data, {"zero3", {"--data", data}}},
            {Field::Events, {"zero3", {"--no-events"}}},
            {Field::Stream, {"zero3", {"--stream", tmp + "/job.sock"}}},
            {Field::Trace, {"zero3", {"--trace", tmp + "/run.sstrace"}}},
            {Field::Json, {"zero3", {"--json", tmp + "/report.json"}}},
            {Field::WeightsOut, {"zero3", {"--weights-out", tmp + "/weights.bin"}}},
            {Field::Save, {"zero3", {"--save", tmp + "/ckpt"}}},
            {Field::SaveEvery, {"zero3", {"--save", tmp + "/ckpt", "--save-every", "2"}}},
            {Field::SaveAsync, {"zero3", {"--save", tmp + "/ckpt", "--save-async"}}},
            {Field::Resume, {"zero3", {"--resume", checkpoint}}},
            {Field::Backend, {"zero3", {"--backend", "cuda"}}},
            {Field::Ranks, {"zero3", {}, 3}},
            {Field::SharedDevice, {"zero3", {"--shared-device", "--ranks", "3"}, 1}},
            {Field::SharedRanks, {"zero3", {"--shared-device", "--ranks", "5"}, 1}},
            {Field::TensorParallel, {"zero3", {"--tp", "2"}, 4, "tiny_tp"}},
            {Field::PipeParallel, {"zero3", {"--pp", "2"}, 4, "tiny"}},
            {Field::PipeSchedule, {"zero3", {"--pp", "2", "--pp-schedule", "gpipe"}, 4, "tiny"}},
            {Field::VirtualStages,
             {"zero3",
              {"--pp", "2", "--pp-schedule", "interleaved", "--virtual-stages", "2", "--grad-accum",
               "2"},
              4,
              "small"}},
        };
        for (const Field f : {Field::KeepNvme, Field::AioBlockBytes, Field::AioQueueDepth}) {
            std::vector<std::string>& flags = samples[f].flags;
            flags.insert(flags.begin(), nvme.begin(), nvme.end());
        }
        samples[Field::KeepNvme].flags.push_back("--keep-nvme");

        for (const runconfig::FieldSpec& spec : runconfig::kFields) {
            const Field f = spec.field;
            const std::string name(spec.flag);
            const auto it = samples.find(f);
            QVERIFY2(it != samples.end(), ("no sample for " + name).c_str());
            const Sample& s = it->second;
            const bool nvmeField =
                std::find(s.flags.begin(), s.flags.end(), "nvme") != s.flags.end();
            if (nvmeField && !runconfig::kNvmeTierBuilt) continue; // this build has no NVMe tier

            std::vector<std::string> args = {"--strategy", s.strategy};
            if (f != Field::Model) args.insert(args.end(), {"--model", s.model});
            if (f != Field::Steps) args.insert(args.end(), {"--steps", "3"});
            args.insert(args.end(), s.flags.begin(), s.flags.end());
            runconfig::RunConfig fromFlags;
            try {
                fromFlags = parse(args, s.processes);
            } catch (const std::exception& e) {
                QFAIL((name + ": the sample does not parse: " + e.what()).c_str());
            }
            const FieldValue want = runconfig::getField(fromFlags, f);
            // The sample sets something: it is not what the field would be without it.
            if (!spec.always) {
                const FieldValue unset = runconfig::getField(runconfig::defaultsFor(fromFlags), f);
                QVERIFY2(want != unset,
                         (name + ": the sample is the default " + show(want)).c_str());
            }
            const auto expectSame = [&](const runconfig::RunConfig& c, const char* path) {
                const FieldValue got = runconfig::getField(c, f);
                return got == want ? std::string()
                                   : name + " lost on " + path + ": " + show(got) + " instead of " +
                                         show(want);
            };

            // JSON: every field but the run's own outputs (and the ranks' twin, world_size).
            runconfig::RunConfig fromJson = fromFlags;
            if (!spec.key.empty()) {
                fromJson = runconfig::configFromJson(runconfig::toJson(fromFlags));
                const std::string lost = expectSame(fromJson, "flags → JSON → config");
                QVERIFY2(lost.empty(), lost.c_str());
            } else {
                QVERIFY2(spec.role == runconfig::Role::Output || f == Field::SharedRanks,
                         (name + " has no JSON key").c_str());
            }
            // The resume's learning rate comes from the checkpoint, which the JSON does not hold.
            fromJson.checkpointLearningRate = fromFlags.checkpointLearningRate;
            const runconfig::RunConfig again =
                parse(runconfig::toWorkerArgs(fromJson), processesOf(fromJson));
            const std::string lostFlags = expectSame(again, "config → worker flags → config");
            QVERIFY2(lostFlags.empty(), lostFlags.c_str());

            // The GUI: a loaded run in the panel's request, and the worker flags it starts.
            if (spec.role == runconfig::Role::Output) continue; // never kept, never shown
            const RunRequest request = fromRunConfig(again);
            const std::string lostGui = expectSame(toRunConfig(request), "config → GUI request");
            QVERIFY2(lostGui.empty(), lostGui.c_str());
            std::vector<std::string> started;
            for (const QString& a :
                 workerArguments(request, dir.path() + QStringLiteral("/gui.sock")))
                started.push_back(a.toStdString());
            const std::string lostStart =
                expectSame(parse(started, request.threads ? 1 : request.ranks),
                           "GUI request → worker flags → config");
            QVERIFY2(lostStart.empty(), lostStart.c_str());
        }
    }

    // What the panel has no widget for is kept, listed, and passed as its flag.
    void settingsWithoutAWidgetAreCarriedAndListed() {
        runconfig::RunConfig c = runconfig::parseRunConfig(
            std::vector<std::string>{"--model", "tiny", "--strategy", "fsdp", "--steps", "2",
                                     "--lr", "0.02", "--timeout-ms", "5000", "--no-sync", "--seed",
                                     "7"},
            2);
        const RunRequest r = fromRunConfig(c);
        const QStringList flags = r.carriedFlags();
        QVERIFY2(flags.contains(QStringLiteral("--lr 0.02")) &&
                     flags.contains(QStringLiteral("--timeout-ms 5000")) &&
                     flags.contains(QStringLiteral("--no-sync")) &&
                     flags.contains(QStringLiteral("--seed 7")),
                 qPrintable(flags.join(QStringLiteral(", "))));
        // The panel keeps them in its request, lists them, and forgets them on request.
        RunConfigPanel panel;
        panel.setRequest(r);
        QCOMPARE(panel.request().carried, r.carried);
        auto* note = panel.findChild<QLabel*>(QStringLiteral("carriedNote"));
        QVERIFY(note && !note->parentWidget()->isHidden());
        QVERIFY2(note->text().contains(QStringLiteral("0.02")), qPrintable(note->text()));
        auto* clear = panel.findChild<QToolButton*>(QStringLiteral("carriedClear"));
        QVERIFY(clear);
        clear->click();
        QVERIFY(panel.request().carried.empty());
        QVERIFY(note->parentWidget()->isHidden());
        // The learning rate reads as typed, not as its 17-digit double.
        QVERIFY2(fromRunConfig(runconfig::parseRunConfig(
                                   std::vector<std::string>{"--model", "tiny", "--strategy", "ddp",
                                                            "--steps", "1", "--lr", "0.003"},
                                   2))
                     .carriedFlags()
                     .contains(QStringLiteral("--lr 0.003")),
                 "--lr 0.003");
        // A carried FSDP option does not block another strategy: after switching to ZeRO-3 the
        // request validates and starts without it (and keeps it for a switch back).
        RunRequest switched = r;
        switched.strategy = plan::Strategy::Zero3;
        switched.ranks = 2;
        QVERIFY(!toRunConfig(switched).knobs.noSync);
        QVERIFY(runconfig::validate(toRunConfig(switched)).empty());
        QVERIFY(switched.carriedFlags().contains(QStringLiteral("--no-sync")));
        // A setting the strategy does not read is not kept: ZeRO-3 has no no_sync.
        c.strategy = plan::Strategy::Zero3;
        QVERIFY(!fromRunConfig(c).carriedFlags().contains(QStringLiteral("--no-sync")));
    }
};

QTEST_MAIN(RunSettingsRoundTripTest)
#include "run_settings_roundtrip_test.moc"
