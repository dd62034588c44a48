#include "run/run_request.h"

#include "core/args.h"
#include "core/error.h"
#include "launch/mpirun.h"
#include "plan/policy.h"
#include "platform/cuda_probe.h"
#include "runconfig/config_json.h"
#include "shardscope/worker_features.h"

#include <QCoreApplication>
#include <QFileInfo>
#include <algorithm>
#include <cmath>

namespace shardscope::widgets {
namespace {

using plan::Strategy;
using runconfig::Code;
using runconfig::Field;

QString divisorsOf(std::int64_t n) {
    QStringList ds;
    for (std::int64_t d = 1; d <= n; ++d)
        if (n % d == 0) ds << QString::number(d);
    return ds.join(QStringLiteral(", "));
}

} // namespace

const runconfig::ModelPreset* findRunPreset(const QString& id) {
    return runconfig::findPreset(id.toStdString());
}

runconfig::RunConfig toRunConfig(const RunRequest& r) {
    runconfig::RunConfig c;
    if (const runconfig::ModelPreset* p = findRunPreset(r.model))
        c.preset = *p;
    else
        c.preset.name = r.model.toStdString();
    c.strategy = r.strategy;
    c.steps = r.steps;
    c.precision = r.precision;
    c.checkpointing = r.checkpointing;
    c.worldSize = r.ranks;
    c.sharedDevice = r.threads;
    c.backend = r.gpu ? runconfig::Backend::Cuda : runconfig::Backend::Cpu;
    c.capacityBytes = r.capacityBytes;
    c.tensorParallel = r.tensorParallel;
    c.pipeParallel = r.pipeParallel;
    c.pipeSchedule = r.pipeSchedule;
    c.virtualStages = r.virtualStages;
    if (r.microBatch > 0) c.preset.microBatch = r.microBatch;
    // Knobs the strategy does not read are neither passed nor recorded (runconfig::applies).
    plan::Knobs& k = c.knobs;
    k.reduceBucketBytes = k.allGatherBucketBytes = r.bucketBytes;
    k.prefetchDepth = r.prefetch;
    // SHARD_GRAD_OP never reshards after forward, as the worker sets it.
    k.reshardAfterForward = r.strategy != Strategy::FsdpShardGradOp && r.reshardAfterForward;
    k.maxInflightAllGathers = r.maxInflight;
    k.persistenceThresholdParams = r.persistenceThreshold;
    k.hybridGroupSize = r.hybridGroup;
    k.gradAccumSteps = r.gradAccum;
    c.offload = {r.offloadOptimizer, r.offloadParams};
    if (!r.saveDir.isEmpty()) c.saveDir = r.saveDir.toStdString();
    c.saveEvery = r.saveEvery;
    if (!r.resumePath.isEmpty()) c.resumePath = r.resumePath.toStdString();
    c.nvmeDir = r.nvmeDir.toStdString();
    c.aioBlockBytes = r.aioBlockBytes;
    c.aioQueueDepth = r.aioQueueDepth;
    // A carried setting the strategy now chosen does not read (no_sync after switching from FSDP)
    // stays carried for a switch back, but sets nothing.
    for (const auto& [field, value] : r.carried)
        if (runconfig::appliesToStrategy(field, c.strategy)) runconfig::setField(c, field, value);
    return c;
}

RunRequest fromRunConfig(const runconfig::RunConfig& c, const RunRequest& base) {
    RunRequest r = base;
    const runconfig::ModelPreset* preset = runconfig::findPreset(c.preset.name);
    r.model = QString::fromStdString(c.preset.name);
    r.ranks = c.worldSize;
    r.gpu = c.backend == runconfig::Backend::Cuda;
    r.threads = c.sharedDevice;
    r.strategy = c.strategy;
    r.precision = c.precision;
    r.checkpointing = c.checkpointing;
    r.steps = static_cast<int>(std::clamp<std::int64_t>(c.steps, 1, kMaxSteps));
    r.tensorParallel = std::min(c.tensorParallel, kMaxRanks);
    r.pipeParallel = std::clamp(c.pipeParallel, 1, kMaxRanks);
    r.pipeSchedule = c.pipeSchedule;
    r.virtualStages = std::clamp(c.virtualStages, 1, plan::kMaxVirtualStages);
    r.gradAccum = std::max(c.knobs.gradAccumSteps, 1);
    r.capacityBytes = c.capacityBytes;
    // The preset's own micro-batch shows as "the preset's" (0).
    r.microBatch = preset && c.preset.microBatch != preset->microBatch
                       ? static_cast<int>(c.preset.microBatch)
                       : 0;
    const plan::Knobs& k = c.knobs;
    const auto applies = [&c](Field f) { return runconfig::applies(c, f); };
    r.bucketBytes = k.reduceBucketBytes;
    if (applies(Field::Prefetch)) r.prefetch = k.prefetchDepth;
    if (applies(Field::ReshardAfterForward)) r.reshardAfterForward = k.reshardAfterForward;
    if (applies(Field::MaxInflight)) r.maxInflight = k.maxInflightAllGathers;
    if (applies(Field::Persistence)) r.persistenceThreshold = k.persistenceThresholdParams;
    if (applies(Field::HybridGroup) && k.hybridGroupSize >= 1)
        r.hybridGroup = std::min(k.hybridGroupSize, kMaxRanks);
    r.offloadOptimizer = c.offload.optimizer;
    r.offloadParams = c.offload.param;
    if (applies(Field::NvmeDir)) {
        r.nvmeDir = QString::fromStdString(c.nvmeDir);
        r.aioBlockBytes = c.aioBlockBytes;
        r.aioQueueDepth = static_cast<int>(std::clamp<std::int64_t>(c.aioQueueDepth, 1, 1024));
    }
    r.saveDir = c.saveDir ? QString::fromStdString(*c.saveDir) : QString();
    r.saveEvery = static_cast<int>(c.saveEvery);
    r.resumePath = c.resumePath ? QString::fromStdString(*c.resumePath) : QString();
    // Everything else that differs from its default travels with the request.
    r.carried.clear();
    const runconfig::RunConfig defaults = runconfig::defaultsFor(c);
    for (const runconfig::FieldSpec& s : runconfig::kFields) {
        if (s.panel || s.role == runconfig::Role::Output || !applies(s.field)) continue;
        runconfig::FieldValue v = runconfig::getField(c, s.field);
        if (v != runconfig::getField(defaults, s.field))
            r.carried.emplace_back(s.field, std::move(v));
    }
    return r;
}

void RunRequest::carry(runconfig::Field field, runconfig::FieldValue value) {
    for (auto& [f, v] : carried)
        if (f == field) {
            v = std::move(value);
            return;
        }
    carried.emplace_back(field, std::move(value));
}

QStringList RunRequest::carriedFlags() const {
    QStringList out;
    for (const auto& [f, v] : carried) {
        const runconfig::FieldSpec& s = runconfig::specOf(f);
        QString flag = QString::fromUtf8(s.flag.data(), static_cast<qsizetype>(s.flag.size()));
        if (s.kind != runconfig::ValueKind::Switch)
            flag += QLatin1Char(' ') + QString::fromStdString(runconfig::fieldText(v));
        out << flag;
    }
    return out;
}

std::optional<RunRequest> requestFromConfigJson(const std::string& text, QString* why) {
    const auto refuse = [why](const QString& reason) {
        if (why) *why = reason;
        return std::nullopt;
    };
    const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
    runconfig::RunConfig c;
    try {
        c = runconfig::configFromJson(j);
    } catch (const Error& e) {
        return refuse(QString::fromUtf8(e.what()));
    }
    if (c.worldSize > kMaxRanks)
        return refuse(QCoreApplication::translate(
                          "RunRequest", "its %1 ranks are more than the rank view shows (%2)")
                          .arg(c.worldSize)
                          .arg(kMaxRanks));
    if (c.steps == 0)
        return refuse(QCoreApplication::translate(
            "RunRequest",
            "it converted a checkpoint (0 steps); the run settings train at least one step"));
    return fromRunConfig(c);
}

RunField fieldOf(Field f) {
    if (f == Field::SharedRanks) return RunField::Ranks;
    // Choices shown beside the strategy (precision, checkpointing, resharding) and settings the
    // panel carries without a widget report on the strategy's row.
    if (!runconfig::specOf(f).panel || f == Field::Precision || f == Field::Checkpointing ||
        f == Field::ReshardAfterForward)
        return RunField::Strategy;
    return f;
}

namespace {
// The messages live in the context RunRequest, where lupdate files them (Q_DECLARE_TR_FUNCTIONS)
// and where the rest of this file's QCoreApplication::translate calls look.
struct ProblemText {
    Q_DECLARE_TR_FUNCTIONS(RunRequest)
public:
    static QString describe(const runconfig::Problem& p);
};
} // namespace

QString describe(const runconfig::Problem& p) {
    return ProblemText::describe(p);
}

QString ProblemText::describe(const runconfig::Problem& p) {
    switch (p.code) {
    case Code::OutOfRange:
        switch (p.field) {
        case Field::Ranks:
        case Field::SharedRanks:
            return tr("ranks must be between %1 and %2").arg(p.min).arg(p.max);
        case Field::Steps:
            return tr("steps must be between %1 and %2").arg(p.min).arg(p.max);
        case Field::MicroBatch:
            return tr("micro-batch must be between %1 and %2 (0: the preset's)")
                .arg(p.min)
                .arg(p.max);
        case Field::BucketBytes:
            return tr("buckets must hold at least %1 byte(s)").arg(p.min);
        case Field::Prefetch:
            return tr("prefetch depth must be between %1 and %2 units").arg(p.min).arg(p.max);
        case Field::MaxInflight:
            return tr("in-flight all-gathers must be between %1 and %2").arg(p.min).arg(p.max);
        case Field::Persistence:
            return tr("the persistence threshold must be between %1 and %2 parameters")
                .arg(p.min)
                .arg(p.max);
        case Field::HybridGroup:
            return tr("the hybrid group must be between %1 and %2 ranks").arg(p.min).arg(p.max);
        case Field::Capacity:
            return tr("a capacity budget must be more than 0 bytes");
        case Field::TensorParallel:
            return tr("tensor parallel T must be between %1 and %2").arg(p.min).arg(p.max);
        case Field::SaveEvery:
            return tr("save every must be between %1 and %2 steps (0: only after the last step)")
                .arg(p.min)
                .arg(p.max);
        default:
            return tr("value %1 is outside %2–%3").arg(p.value).arg(p.min).arg(p.max);
        }
    case Code::UnknownName:
        return tr("unknown model preset '%1' (expected %2)")
            .arg(QString::fromStdString(p.text),
                 QString::fromStdString(runconfig::presetChoices()));
    case Code::NotADivisor:
        if (p.field == Field::TensorParallel) {
            if (p.text == "ranks")
                return tr("T must divide the ranks (%1 ranks: %2)")
                    .arg(p.max)
                    .arg(divisorsOf(p.max));
            if (p.text == "attention heads")
                return tr("T must divide the model's %1 attention heads (%2)")
                    .arg(p.max)
                    .arg(divisorsOf(p.max));
            return tr("T must divide the model's MLP width %1").arg(p.max);
        }
        if (p.text ==
            "data-parallel") // a T × D mesh: the shard groups split the D data-parallel ranks
            return tr("the hybrid group must divide the data-parallel ranks D = ranks / T (D = %1: "
                      "%2)")
                .arg(p.max)
                .arg(divisorsOf(p.max));
        return tr("the hybrid group must divide the ranks (%1 ranks: %2)")
            .arg(p.max)
            .arg(divisorsOf(p.max));
    case Code::ContradictsStrategy:
        return tr("FSDP SHARD_GRAD_OP keeps parameters gathered: it cannot reshard after forward");
    case Code::NotForStrategy:
        return tr("no_sync is an FSDP option");
    case Code::Theory:
        return tr("theory cannot size this run: %1").arg(QString::fromStdString(p.text));
    case Code::OffloadNotForStrategy:
        if (p.field == Field::OffloadOptimizer)
            return tr("optimizer offload needs a strategy that shards the optimizer (ZeRO-1/2/3, "
                      "FSDP), not %1")
                .arg(QString::fromStdString(p.text));
        return tr("parameter offload needs a strategy that shards parameters (ZeRO-3, FSDP), not "
                  "%1")
            .arg(QString::fromStdString(p.text));
    case Code::OffloadNeedsBf16:
        return tr("offload needs bf16 mixed precision (fp32 master weights on the host)");
    case Code::OffloadTierNotBuilt:
        return tr("the NVMe tier is not available in this build");
    case Code::CheckpointUnsupported:
        return tr("checkpoints of a run with %1 are not supported")
            .arg(QString::fromStdString(p.text));
    case Code::Pipeline:
        return tr("pipeline: %1").arg(QString::fromStdString(p.text));
    case Code::NeedsFlag:
        if (p.field == Field::SaveEvery) return tr("saving every K steps needs a save folder");
        return tr("%1 needs %2")
            .arg(QString::fromStdString(std::string(runconfig::flagName(p.field))),
                 QString::fromStdString(p.text));
    }
    return QString::fromStdString(p.text);
}

const GpuSupport& GpuSupport::probed() {
    static const GpuSupport support{platform::probeCuda(), kWorkerCuda, kWorkerNccl};
    return support;
}

std::vector<FieldIssue> validate(const RunRequest& r) {
    return validate(r, GpuSupport::probed());
}

std::vector<FieldIssue> validate(const RunRequest& r, const GpuSupport& gpu) {
    std::vector<FieldIssue> issues;
    auto add = [&](RunField f, const QString& m) { issues.push_back({f, m}); };
    if (r.ranks < 1 || r.ranks > kMaxRanks)
        add(RunField::Ranks,
            QCoreApplication::translate("RunRequest", "ranks must be between 1 and %1")
                .arg(kMaxRanks));
    if (r.gpu) {
        if (const QString why = gpuUnavailableReason(gpu); !why.isEmpty()) {
            add(RunField::Backend, why);
        } else if (!r.threads && r.ranks > gpu.cuda.deviceCount) {
            // NCCL refuses two ranks on one GPU (docs/design.md, Running ranks).
            add(RunField::SharedDevice,
                QCoreApplication::translate(
                    "RunRequest",
                    "%1 ranks on %n GPU(s): under mpirun each rank needs its own GPU. "
                    "Tick “Ranks as threads in one process” to run them all on GPU 0.",
                    nullptr, gpu.cuda.deviceCount)
                    .arg(r.ranks));
        } else if (!r.threads && r.ranks > 1 && !gpu.workerNccl) {
            add(RunField::SharedDevice,
                QCoreApplication::translate(
                    "RunRequest", "This build has no NCCL, which GPU ranks under mpirun need. "
                                  "Tick “Ranks as threads in one process” to run them on GPU 0."));
        }
    }
    if (r.microBatch < 0)
        add(RunField::MicroBatch, describe({Field::MicroBatch,
                                            Code::OutOfRange,
                                            r.microBatch,
                                            1,
                                            runconfig::limitOf(Field::MicroBatch).max,
                                            {}}));
    // The checkpoint folders are opened by the CLI (a damaged checkpoint is its one line); here
    // only what a glance at the file system shows.
    if (!r.resumePath.isEmpty() && !QFileInfo(r.resumePath).isDir())
        add(RunField::Resume,
            QCoreApplication::translate("RunRequest", "'%1' is not a checkpoint folder")
                .arg(r.resumePath));
    if (!r.saveDir.isEmpty() && QFileInfo::exists(r.saveDir) && !QFileInfo(r.saveDir).isDir())
        add(RunField::Save,
            QCoreApplication::translate("RunRequest", "'%1' is not a folder").arg(r.saveDir));
    for (FieldIssue& i : validateNvme(r))
        add(i.field, i.message);
    // Everything else as the worker checks it, one problem per field.
    for (const runconfig::Problem& p : runconfig::validate(toRunConfig(r))) {
        const RunField f = fieldOf(p.field);
        if (std::none_of(issues.begin(), issues.end(),
                         [f](const FieldIssue& i) { return i.field == f; }))
            add(f, describe(p));
    }
    return issues;
}

// The NVMe tier's folder and I/O settings, checked by the worker's own flag parser (the folder
// exists, is writable, has room for every rank's file), so the panel says what the run would.
std::vector<FieldIssue> validateNvme(const RunRequest& r) {
    if (!r.usesNvme()) return {};
    if (r.nvmeDir.trimmed().isEmpty())
        return {{RunField::NvmeDir,
                 QCoreApplication::translate(
                     "RunRequest", "Choose a folder for the NVMe tier's files (one per rank).")}};
    runconfig::RunConfig c = toRunConfig(r);
    if (!runconfig::validate(c).empty()) return {}; // the other fields' problems come first
    c.streamPath = "/nonexistent/validate";         // not opened by the parser
    try {
        runconfig::parseRunConfig(runconfig::toWorkerArgs(c), r.threads ? 1 : r.ranks);
    } catch (const Error& e) {
        const QString why = QString::fromUtf8(e.what());
        if (why.startsWith(QLatin1String("--aio-block-bytes")))
            return {{RunField::AioBlockBytes, why}};
        if (why.startsWith(QLatin1String("--aio-queue-depth")))
            return {{RunField::AioQueueDepth, why}};
        if (why.contains(QLatin1String("--nvme-dir"))) return {{RunField::NvmeDir, why}};
    }
    return {};
}

report::ConfigImport importListingAsRun(const report::ConfigImport& listing,
                                        const RunRequest& atImport, const RunRequest& now) {
    // Whether the setting a flag makes is the same in both (the field table names its field).
    const runconfig::RunConfig a = toRunConfig(atImport), b = toRunConfig(now);
    const auto same = [&](const std::string& flag) -> bool {
        const std::optional<Field> f = runconfig::fieldOfFlag(flag);
        return !f || runconfig::getField(a, *f) == runconfig::getField(b, *f);
    };
    report::ConfigImport out;
    out.source = listing.source;
    for (const auto& [key, setting] : listing.applied) {
        const std::string flag = setting.substr(0, setting.find(' '));
        if (same(flag))
            out.applied.emplace_back(key, setting);
        else
            out.ignored.emplace_back(key, "set " + setting +
                                              " at the import, changed in the run settings since");
    }
    out.ignored.insert(out.ignored.end(), listing.ignored.begin(), listing.ignored.end());
    return out;
}

QStringList workerArguments(const RunRequest& r, const QString& socketPath) {
    runconfig::RunConfig c = toRunConfig(r);
    c.streamPath = socketPath.toStdString();
    QStringList a;
    for (const std::string& s : runconfig::toWorkerArgs(c))
        a << QString::fromStdString(s);
    return a;
}

std::optional<std::uint64_t> parseByteText(const QString& text, QString* error) {
    const QString t = text.trimmed();
    if (t.isEmpty()) return std::nullopt;
    // The flags' own grammar (core/args.h: parseBytes), so the panel accepts what the CLI does.
    try {
        return parseBytes(t.toStdString(), "size");
    } catch (const Error& e) {
        *error = std::string_view(e.what()).find("too large") != std::string_view::npos
                     ? QCoreApplication::translate("RunRequest", "'%1' is too large").arg(t)
                     : QCoreApplication::translate(
                           "RunRequest", "'%1' is not a size (examples: 64MiB, 1.5GB, 1000000)")
                           .arg(t);
        return std::nullopt;
    }
}

QString gpuUnavailableReason() {
    return gpuUnavailableReason(GpuSupport::probed());
}

QString gpuUnavailableReason(const GpuSupport& gpu) {
    if (!gpu.cuda.available)
        return QCoreApplication::translate("RunRequest", "GPU unavailable: %1")
            .arg(QString::fromStdString(gpu.cuda.reason));
    if (!gpu.workerCuda)
        return QCoreApplication::translate(
                   "RunRequest", "GPU found (%1), but this build's worker has no CUDA backend: "
                                 "configure with nvcc available (SHARDSCOPE_CUDA=AUTO or ON)")
            .arg(QString::fromStdString(platform::describe(gpu.cuda)));
    return {};
}

QString mpiUnavailableReason(const QString& mpirun) {
    if (!kWorkerMpi)
        return QCoreApplication::translate("RunRequest", "this build's worker has no MPI");
    if (!launch::findExecutable(mpirun.toStdString()))
        return QCoreApplication::translate("RunRequest", "mpirun not found");
    return {};
}

QString gpuDescription(const GpuSupport& gpu) {
    if (const QString why = gpuUnavailableReason(gpu); !why.isEmpty()) return why;
    return QString::fromStdString(platform::describe(gpu.cuda));
}

} // namespace shardscope::widgets
