#include "run/run_request.h"

#include <QCoreApplication>
#include <QRegularExpression>
#include <algorithm>
#include <cmath>
#include <type_traits>

#include "core/error.h"
#include "launch/mpirun.h"
#include "plan/policy.h"
#include "platform/cuda_probe.h"
#include "shardscope/worker_features.h"

namespace shardscope::widgets {
namespace {

using runconfig::Code;
using runconfig::Field;
using plan::Strategy;

QString divisorsOf(std::int64_t n) {
    QStringList ds;
    for (std::int64_t d = 1; d <= n; ++d)
        if (n % d == 0) ds << QString::number(d);
    return ds.join(QStringLiteral(", "));
}

} // namespace

const runconfig::ModelPreset* findRunPreset(const QString& id) { return runconfig::findPreset(id.toStdString()); }

runconfig::RunConfig toRunConfig(const RunRequest& r) {
    runconfig::RunConfig c;
    if (const runconfig::ModelPreset* p = findRunPreset(r.model)) c.preset = *p;
    else c.preset.name = r.model.toStdString();
    c.strategy = r.strategy;
    c.steps = r.steps;
    c.seed = r.seed;
    c.precision = r.precision;
    c.checkpointing = r.checkpointing;
    c.worldSize = r.ranks;
    c.sharedDevice = r.threads;
    c.backend = r.gpu ? runconfig::Backend::Cuda : runconfig::Backend::Cpu;
    c.capacityBytes = r.capacityBytes;
    if (r.microBatch > 0) c.preset.microBatch = r.microBatch;
    // Knobs are set only where the strategy reads them, so the worker's command line shows
    // exactly what the user changed.
    plan::Knobs& k = c.knobs;
    k.reduceBucketBytes = k.allGatherBucketBytes = r.bucketBytes;
    const plan::Policy policy = plan::policyFor(r.strategy);
    if (policy.usesPrefetch()) k.prefetchDepth = r.prefetch;
    if (policy.usesReshardAfterForward()) k.reshardAfterForward = r.reshardAfterForward;
    if (r.strategy == Strategy::FsdpShardGradOp) k.reshardAfterForward = false; // as the worker sets it
    if (policy.usesMaxInflight()) k.maxInflightAllGathers = r.maxInflight;
    if (policy.usesPersistence()) k.persistenceThresholdParams = r.persistenceThreshold;
    if (policy.usesHybridGroup()) k.hybridGroupSize = r.hybridGroup;
    return c;
}

namespace {

// One value of the configuration JSON: absent keeps the default; present but of another type
// or out of [lo, hi] is refused, naming the key.
template <class T>
bool readValue(const nlohmann::json& j, const char* key, T& out, T lo, T hi, QString* why) {
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) return true;
    bool ok = false;
    T v{};
    if constexpr (std::is_same_v<T, bool>) {
        ok = it->is_boolean();
        if (ok) v = it->get<bool>();
    } else {
        ok = it->is_number_integer() || it->is_number_unsigned();
        if (ok) {
            if (it->is_number_unsigned()) {
                const auto u = it->get<std::uint64_t>();
                ok = u <= static_cast<std::uint64_t>(hi);
                v = static_cast<T>(u);
            } else {
                const auto s = it->get<std::int64_t>();
                ok = s >= 0 && static_cast<std::uint64_t>(s) <= static_cast<std::uint64_t>(hi);
                v = static_cast<T>(s);
            }
            ok = ok && v >= lo && v <= hi;
        }
    }
    if (!ok) {
        if (why) *why = QCoreApplication::translate("RunRequest", "its “%1” is not one the settings can show").arg(QString::fromLatin1(key));
        return false;
    }
    out = v;
    return true;
}

} // namespace

std::optional<RunRequest> requestFromConfigJson(const std::string& text, QString* why) {
    const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
        if (why) *why = QCoreApplication::translate("RunRequest", "its configuration is not a JSON object");
        return std::nullopt;
    }
    RunRequest r;
    const auto text_ = [&j](const char* key) {
        const auto it = j.find(key);
        return it != j.end() && it->is_string() ? std::optional<std::string>(it->get<std::string>()) : std::nullopt;
    };
    const auto model = text_("model");
    const runconfig::ModelPreset* preset = model ? runconfig::findPreset(*model) : nullptr;
    if (!preset) {
        if (why) *why = QCoreApplication::translate("RunRequest", "its model “%1” is not a preset").arg(QString::fromStdString(model.value_or("?")));
        return std::nullopt;
    }
    r.model = QString::fromStdString(*model);
    const auto strategy = text_("strategy") ? plan::parseStrategy(*text_("strategy")) : std::nullopt;
    const auto precision = text_("precision") ? plan::parsePrecision(*text_("precision")) : std::optional(r.precision);
    if (!strategy || !precision) {
        if (why) *why = QCoreApplication::translate("RunRequest", "its strategy or precision is not one the settings know");
        return std::nullopt;
    }
    r.strategy = *strategy;
    r.precision = *precision;
    r.gpu = text_("backend").value_or("cpu") == "cuda";
    std::uint64_t capacity = 0;
    std::int64_t microBatch = 0;
    const nlohmann::json knobs = j.contains("knobs") && j["knobs"].is_object() ? j["knobs"] : nlohmann::json::object();
    const auto limit = [](Field f) { return runconfig::limitOf(f); };
    using runconfig::limitOf;
    // Knobs the strategy does not read may hold anything (0: unset); those it reads must fit.
    std::int64_t prefetch = r.prefetch, inflight = r.maxInflight, hybrid = r.hybridGroup;
    constexpr std::int64_t kAny = INT32_MAX;
    const bool ok =
        readValue(j, "world_size", r.ranks, 1, kMaxRanks, why) && readValue(j, "steps", r.steps, 1, kMaxSteps, why) &&
        readValue<std::uint64_t>(j, "seed", r.seed, 0, UINT64_MAX, why) &&
        readValue(j, "checkpointing", r.checkpointing, false, true, why) && readValue(j, "shared_device", r.threads, false, true, why) &&
        readValue<std::uint64_t>(j, "capacity_bytes", capacity, 1, UINT64_MAX, why) &&
        readValue<std::int64_t>(j, "micro_batch", microBatch, 1, limit(Field::MicroBatch).max, why) &&
        readValue<std::uint64_t>(knobs, "reduce_bucket_bytes", r.bucketBytes, 1, UINT64_MAX, why) &&
        readValue<std::int64_t>(knobs, "prefetch", prefetch, 0, kAny, why) &&
        readValue(knobs, "reshard_after_forward", r.reshardAfterForward, false, true, why) &&
        readValue<std::int64_t>(knobs, "max_inflight", inflight, 0, kAny, why) &&
        readValue<std::uint64_t>(knobs, "persistence_threshold", r.persistenceThreshold, 0, 1000000000, why) &&
        readValue<std::int64_t>(knobs, "hybrid_group", hybrid, 0, kAny, why);
    if (!ok) return std::nullopt;
    const plan::Policy policy = plan::policyFor(r.strategy);
    const auto knob = [&why](std::int64_t v, Field f, std::int64_t hi, bool used, const char* key, int& out) {
        if (v >= limitOf(f).min && v <= hi) {
            out = static_cast<int>(v);
            return true;
        }
        if (!used) return true; // keeps the panel's default
        if (why) *why = QCoreApplication::translate("RunRequest", "its “%1” is not one the settings can show").arg(QString::fromLatin1(key));
        return false;
    };
    if (!knob(prefetch, Field::Prefetch, limitOf(Field::Prefetch).max, policy.usesPrefetch(), "prefetch", r.prefetch) ||
        !knob(inflight, Field::MaxInflight, limitOf(Field::MaxInflight).max, policy.usesMaxInflight(), "max_inflight", r.maxInflight) ||
        !knob(hybrid, Field::HybridGroup, kMaxRanks, policy.usesHybridGroup(), "hybrid_group", r.hybridGroup))
        return std::nullopt;
    if (j.contains("capacity_bytes") && !j["capacity_bytes"].is_null()) r.capacityBytes = capacity;
    // The preset's own micro-batch shows as "the preset's" (0).
    r.microBatch = microBatch > 0 && microBatch != preset->microBatch ? static_cast<int>(microBatch) : 0;
    return r;
}

RunField fieldOf(Field f) {
    switch (f) {
    case Field::Model: return RunField::Model;
    case Field::Ranks:
    case Field::SharedRanks: return RunField::Ranks;
    case Field::Steps: return RunField::Steps;
    case Field::MicroBatch: return RunField::MicroBatch;
    case Field::BucketBytes: return RunField::Bucket;
    case Field::Prefetch: return RunField::Prefetch;
    case Field::MaxInflight: return RunField::MaxInflight;
    case Field::Persistence: return RunField::Persistence;
    case Field::HybridGroup: return RunField::HybridGroup;
    case Field::Capacity: return RunField::Capacity;
    case Field::Backend: return RunField::Backend;
    case Field::SharedDevice: return RunField::Threads;
    default: return RunField::Strategy; // options of the strategy the panel sets itself
    }
}

QString describe(const runconfig::Problem& p) {
    const auto tr = [](const char* text) { return QCoreApplication::translate("RunRequest", text); };
    switch (p.code) {
    case Code::OutOfRange:
        switch (p.field) {
        case Field::Ranks:
        case Field::SharedRanks: return tr("ranks must be between %1 and %2").arg(p.min).arg(p.max);
        case Field::Steps: return tr("steps must be between %1 and %2").arg(p.min).arg(p.max);
        case Field::MicroBatch: return tr("micro-batch must be between %1 and %2 (0: the preset's)").arg(p.min).arg(p.max);
        case Field::BucketBytes: return tr("buckets must hold at least %1 byte(s)").arg(p.min);
        case Field::Prefetch: return tr("prefetch depth must be between %1 and %2 units").arg(p.min).arg(p.max);
        case Field::MaxInflight: return tr("in-flight all-gathers must be between %1 and %2").arg(p.min).arg(p.max);
        case Field::Persistence: return tr("the persistence threshold must be between %1 and %2 parameters").arg(p.min).arg(p.max);
        case Field::HybridGroup: return tr("the hybrid group must be between %1 and %2 ranks").arg(p.min).arg(p.max);
        case Field::Capacity: return tr("a capacity budget must be more than 0 bytes");
        default: return tr("value %1 is outside %2–%3").arg(p.value).arg(p.min).arg(p.max);
        }
    case Code::UnknownName:
        return tr("unknown model preset '%1' (expected %2)")
            .arg(QString::fromStdString(p.text), QString::fromStdString(runconfig::presetChoices()));
    case Code::NotADivisor:
        return tr("the hybrid group must divide the ranks (%1 ranks: %2)").arg(p.max).arg(divisorsOf(p.max));
    case Code::ContradictsStrategy: return tr("FSDP SHARD_GRAD_OP keeps parameters gathered: it cannot reshard after forward");
    case Code::NotForStrategy: return tr("no_sync is an FSDP option");
    case Code::Theory: return tr("theory cannot size this run: %1").arg(QString::fromStdString(p.text));
    }
    return QString::fromStdString(p.text);
}

const GpuSupport& GpuSupport::probed() {
    static const GpuSupport support{platform::probeCuda(), kWorkerCuda, kWorkerNccl};
    return support;
}

std::vector<FieldIssue> validate(const RunRequest& r) { return validate(r, GpuSupport::probed()); }

std::vector<FieldIssue> validate(const RunRequest& r, const GpuSupport& gpu) {
    std::vector<FieldIssue> issues;
    auto add = [&](RunField f, const QString& m) { issues.push_back({f, m}); };
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
    if (r.microBatch < 0) add(RunField::MicroBatch, describe({Field::MicroBatch, Code::OutOfRange, r.microBatch, 1,
                                                              runconfig::limitOf(Field::MicroBatch).max, {}}));
    // Everything else as the worker checks it, one problem per field.
    for (const runconfig::Problem& p : runconfig::validate(toRunConfig(r))) {
        const RunField f = fieldOf(p.field);
        if (std::none_of(issues.begin(), issues.end(), [f](const FieldIssue& i) { return i.field == f; }))
            add(f, describe(p));
    }
    return issues;
}

QStringList workerArguments(const RunRequest& r, const QString& socketPath) {
    runconfig::RunConfig c = toRunConfig(r);
    c.streamPath = socketPath.toStdString();
    QStringList a;
    for (const std::string& s : runconfig::toWorkerArgs(c)) a << QString::fromStdString(s);
    return a;
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
            .arg(QString::fromStdString(platform::describe(gpu.cuda)));
    return {};
}

QString mpiUnavailableReason(const QString& mpirun) {
    if (!kWorkerMpi) return QCoreApplication::translate("RunRequest", "this build's worker has no MPI");
    if (!launch::findExecutable(mpirun.toStdString())) return QCoreApplication::translate("RunRequest", "mpirun not found");
    return {};
}

QString gpuDescription(const GpuSupport& gpu) {
    if (const QString why = gpuUnavailableReason(gpu); !why.isEmpty()) return why;
    return QString::fromStdString(platform::describe(gpu.cuda));
}

} // namespace shardscope::widgets
