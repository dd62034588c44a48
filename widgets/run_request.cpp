#include "run_request.h"

#include <QCoreApplication>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <cmath>

#include "core/error.h"
#include "launch/mpirun.h"
#include "device/cuda_probe.h"

// Set by widgets/CMakeLists.txt from the build's CUDA/NCCL options (the worker's backends).
#ifndef SHARDSCOPE_WORKER_CUDA
#define SHARDSCOPE_WORKER_CUDA 0
#endif
#ifndef SHARDSCOPE_WORKER_NCCL
#define SHARDSCOPE_WORKER_NCCL 0
#endif
#ifndef SHARDSCOPE_WORKER_MPI
#define SHARDSCOPE_WORKER_MPI 1
#endif

namespace shardscope::widgets {
namespace {

using theory::Strategy;


bool isFsdp(Strategy s) {
    return s == Strategy::FsdpFullShard || s == Strategy::FsdpShardGradOp || s == Strategy::FsdpHybridShard;
}

QString divisorsOf(int n) {
    QStringList ds;
    for (int d = 1; d <= n; ++d)
        if (n % d == 0) ds << QString::number(d);
    return ds.join(QStringLiteral(", "));
}

} // namespace

std::vector<RunModelPreset> loadRunPresets() {
    std::vector<RunModelPreset> out;
    QFile file(QStringLiteral(":/presets/models.json"));
    if (!file.open(QIODevice::ReadOnly)) return out;
    const QJsonObject root = QJsonDocument::fromJson(file.readAll()).object();
    for (const QString& id : {QStringLiteral("tiny"), QStringLiteral("small"), QStringLiteral("medium")}) {
        const QJsonObject o = root.value(id).toObject();
        if (o.isEmpty()) continue;
        RunModelPreset p;
        p.id = id;
        p.description = o.value(QStringLiteral("description")).toString();
        p.shape.layers = o.value(QStringLiteral("layers")).toInteger();
        p.shape.dModel = o.value(QStringLiteral("d_model")).toInteger();
        p.shape.heads = o.value(QStringLiteral("heads")).toInteger();
        p.shape.vocab = o.value(QStringLiteral("vocab")).toInteger();
        p.shape.seqLen = o.value(QStringLiteral("seq_len")).toInteger();
        p.microBatch = o.value(QStringLiteral("micro_batch")).toInteger(1);
        out.push_back(p);
    }
    return out;
}

std::optional<RunModelPreset> findRunPreset(const QString& id) {
    for (const RunModelPreset& p : loadRunPresets())
        if (p.id == id) return p;
    return std::nullopt;
}

bool usesPrefetch(Strategy s) { return s == Strategy::Zero3 || isFsdp(s); }
bool usesReshardAfterForward(Strategy s) { return s == Strategy::FsdpFullShard || s == Strategy::FsdpHybridShard; }
bool usesMaxInflight(Strategy s) { return isFsdp(s); }
bool usesPersistence(Strategy s) { return s == Strategy::Zero3; }
bool usesHybridGroup(Strategy s) { return s == Strategy::FsdpHybridShard; }

const GpuSupport& GpuSupport::probed() {
    static const GpuSupport support{device::probeCuda(), SHARDSCOPE_WORKER_CUDA != 0, SHARDSCOPE_WORKER_NCCL != 0};
    return support;
}

std::vector<FieldIssue> validate(const RunRequest& r) { return validate(r, GpuSupport::probed()); }

std::vector<FieldIssue> validate(const RunRequest& r, const GpuSupport& gpu) {
    std::vector<FieldIssue> issues;
    auto add = [&](RunField f, const QString& m) { issues.push_back({f, m}); };
    if (!findRunPreset(r.model)) add(RunField::Model, QCoreApplication::translate("RunRequest", "unknown model preset '%1' (expected tiny, small or medium)").arg(r.model));
    if (r.ranks < 1 || r.ranks > kMaxRanks) add(RunField::Ranks, QCoreApplication::translate("RunRequest", "ranks must be between 1 and %1").arg(kMaxRanks));
    if (r.gpu) {
        if (const QString why = gpuUnavailableReason(gpu); !why.isEmpty()) {
            add(RunField::Backend, why);
        } else if (!r.threads && r.ranks > gpu.cuda.deviceCount) {
            // NCCL refuses two ranks on one GPU (DESIGN.md, Running ranks).
            add(RunField::Threads, QCoreApplication::translate("RunRequest",
                                                               "%1 ranks on %n GPU(s): under mpirun each rank needs its own GPU. "
                                                               "Tick “Ranks as threads in one process” to run them all on GPU 0.",
                                                               nullptr, gpu.cuda.deviceCount)
                                       .arg(r.ranks));
        } else if (!r.threads && r.ranks > 1 && !gpu.workerNccl) {
            add(RunField::Threads, QCoreApplication::translate("RunRequest",
                                                               "This build has no NCCL, which GPU ranks under mpirun need. "
                                                               "Tick “Ranks as threads in one process” to run them on GPU 0."));
        }
    }
    if (r.steps < 1 || r.steps > kMaxSteps) add(RunField::Steps, QCoreApplication::translate("RunRequest", "steps must be between 1 and %1").arg(kMaxSteps));
    if (r.capacityBytes && *r.capacityBytes == 0) add(RunField::Capacity, QCoreApplication::translate("RunRequest", "a capacity budget must be more than 0 bytes"));
    if (r.bucketBytes < 1024) add(RunField::Bucket, QCoreApplication::translate("RunRequest", "buckets must hold at least 1 KiB"));
    if (usesPrefetch(r.strategy) && (r.prefetch < 0 || r.prefetch > 8)) add(RunField::Prefetch, QCoreApplication::translate("RunRequest", "prefetch depth must be between 0 and 8 units"));
    if (usesMaxInflight(r.strategy) && (r.maxInflight < 1 || r.maxInflight > 16))
        add(RunField::MaxInflight, QCoreApplication::translate("RunRequest", "in-flight all-gathers must be between 1 and 16"));
    if (usesHybridGroup(r.strategy)) {
        if (r.hybridGroup < 1 || r.ranks < 1 || r.ranks % r.hybridGroup != 0)
            add(RunField::HybridGroup, QCoreApplication::translate("RunRequest", "the hybrid group must divide the ranks (%1 ranks: %2)").arg(r.ranks).arg(divisorsOf(std::max(r.ranks, 1))));
    }
    if (r.microBatch < 0 || r.microBatch > 256) add(RunField::MicroBatch, QCoreApplication::translate("RunRequest", "micro-batch must be between 1 and 256 (0: the preset's)"));
    return issues;
}

theory::Scenario scenarioOf(const RunRequest& r, const RunModelPreset& preset) {
    theory::Scenario s;
    s.shape = preset.shape;
    s.strategy = r.strategy;
    s.ranks = r.ranks;
    s.precision.kind = r.precision;
    s.knobs.reduceBucketBytes = r.bucketBytes;
    s.knobs.allGatherBucketBytes = r.bucketBytes;
    s.knobs.prefetchDepth = r.prefetch;
    s.knobs.reshardAfterForward = r.strategy == Strategy::FsdpShardGradOp ? false : r.reshardAfterForward;
    s.knobs.maxInflightAllGathers = r.maxInflight;
    s.knobs.persistenceThresholdParams = r.persistenceThreshold;
    s.knobs.hybridGroupSize = usesHybridGroup(r.strategy) ? r.hybridGroup : 0;
    s.activations.microBatch = r.microBatch > 0 ? r.microBatch : preset.microBatch;
    s.activations.checkpointing = r.checkpointing;
    return s;
}

QStringList workerArguments(const RunRequest& r, const QString& socketPath) {
    const theory::Knobs defaults;
    const auto name = theory::strategyName(r.strategy);
    QStringList a{QStringLiteral("--model"), r.model,
                  QStringLiteral("--strategy"), QString::fromLatin1(name.data(), static_cast<qsizetype>(name.size())),
                  QStringLiteral("--steps"), QString::number(r.steps),
                  QStringLiteral("--seed"), QString::number(r.seed),
                  QStringLiteral("--precision"), r.precision == theory::PrecisionKind::Fp32 ? QStringLiteral("fp32") : QStringLiteral("bf16")};
    if (r.checkpointing) a << QStringLiteral("--checkpointing");
    if (r.microBatch > 0) a << QStringLiteral("--micro-batch") << QString::number(r.microBatch);
    // Knobs are sent only where the strategy reads them and they differ from the worker's
    // defaults, so the command line shows exactly what the user changed.
    if (r.bucketBytes != defaults.reduceBucketBytes) a << QStringLiteral("--bucket-bytes") << QString::number(r.bucketBytes);
    if (usesPrefetch(r.strategy) && r.prefetch != defaults.prefetchDepth) a << QStringLiteral("--prefetch") << QString::number(r.prefetch);
    if (usesReshardAfterForward(r.strategy) && !r.reshardAfterForward) a << QStringLiteral("--reshard-after-forward") << QStringLiteral("0");
    if (usesMaxInflight(r.strategy) && r.maxInflight != defaults.maxInflightAllGathers)
        a << QStringLiteral("--max-inflight") << QString::number(r.maxInflight);
    if (usesPersistence(r.strategy) && r.persistenceThreshold > 0)
        a << QStringLiteral("--persistence-threshold") << QString::number(r.persistenceThreshold);
    if (usesHybridGroup(r.strategy)) a << QStringLiteral("--hybrid-group") << QString::number(r.hybridGroup);
    if (r.capacityBytes) a << QStringLiteral("--capacity") << QString::number(*r.capacityBytes);
    a << QStringLiteral("--stream") << socketPath;
    if (r.gpu) a << QStringLiteral("--backend") << QStringLiteral("cuda");
    if (r.threads) a << QStringLiteral("--shared-device") << QStringLiteral("--ranks") << QString::number(r.ranks);
    return a;
}

LaunchCommand launchCommand(const RunRequest& r, const LaunchSettings& settings, const QString& socketPath) {
    const QStringList worker = workerArguments(r, socketPath);
    if (r.threads) return {settings.workerPath, worker, true};
    launch::MpirunOptions options;
    options.mpirun = settings.mpirunPath.toStdString();
    options.ranks = r.ranks;
    options.runningAsRoot = settings.runningAsRoot;
    options.localCores = settings.localCores;
    std::vector<std::string> workerArgs;
    for (const QString& a : worker) workerArgs.push_back(a.toStdString());
    const auto argv = launch::mpirunArgv(options, settings.workerPath.toStdString(), workerArgs);
    LaunchCommand c;
    c.program = QString::fromStdString(argv.front());
    for (std::size_t i = 1; i < argv.size(); ++i) c.arguments << QString::fromStdString(argv[i]);
    return c;
}

std::optional<std::uint64_t> parseByteText(const QString& text, QString* error) {
    const QString t = text.trimmed();
    if (t.isEmpty()) return std::nullopt;
    static const QRegularExpression re(QStringLiteral("^([0-9]+(?:\\.[0-9]+)?)\\s*([KMGT]i?B?|B)?$"),
                                       QRegularExpression::CaseInsensitiveOption);
    const auto m = re.match(t);
    if (!m.hasMatch()) {
        *error = QCoreApplication::translate("RunRequest", "'%1' is not a size (examples: 64MiB, 1.5GB, 1000000)").arg(t);
        return std::nullopt;
    }
    const QString unit = m.captured(2).toUpper();
    double scale = 1;
    if (!unit.isEmpty() && unit != QLatin1String("B")) {
        const int power = QStringLiteral("KMGT").indexOf(unit.front()) + 1;
        scale = std::pow(unit.contains(QLatin1Char('I')) ? 1024.0 : 1000.0, power);
    }
    const double bytes = m.captured(1).toDouble() * scale;
    if (!(bytes < 1.8e19)) {
        *error = QCoreApplication::translate("RunRequest", "'%1' is too large").arg(t);
        return std::nullopt;
    }
    return static_cast<std::uint64_t>(std::llround(bytes));
}

QString gpuUnavailableReason() { return gpuUnavailableReason(GpuSupport::probed()); }

QString gpuUnavailableReason(const GpuSupport& gpu) {
    if (!gpu.cuda.available)
        return QCoreApplication::translate("RunRequest", "GPU unavailable: %1").arg(QString::fromStdString(gpu.cuda.reason));
    if (!gpu.workerCuda)
        return QCoreApplication::translate("RunRequest", "GPU found (%1), but this build's worker has no CUDA backend: "
                                                         "configure with nvcc available (SHARDSCOPE_CUDA=AUTO or ON)")
            .arg(QString::fromStdString(device::describe(gpu.cuda)));
    return {};
}

QString mpiUnavailableReason(const QString& mpirun) {
    if (!SHARDSCOPE_WORKER_MPI) return QCoreApplication::translate("RunRequest", "this build's worker has no MPI");
    if (!launch::findExecutable(mpirun.toStdString())) return QCoreApplication::translate("RunRequest", "mpirun not found");
    return {};
}

QString gpuDescription(const GpuSupport& gpu) {
    if (const QString why = gpuUnavailableReason(gpu); !why.isEmpty()) return why;
    return QString::fromStdString(device::describe(gpu.cuda));
}

} // namespace shardscope::widgets
