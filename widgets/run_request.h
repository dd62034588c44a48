#pragma once
// What the user asks the Ranks page to run: model preset, ranks, strategy and its knobs,
// precision, checkpointing, capacity budget, steps. Validation names each field with the
// reason, and the worker's argument list is built here (the one place that knows the flags).
#include <QString>
#include <QStringList>
#include <cstdint>
#include <optional>
#include <vector>

#include "theory/estimate.h"

namespace shardscope::widgets {

// The worker's GPT presets (resources/presets/models.json, compiled in).
struct RunModelPreset {
    QString id; // tiny | small | medium
    QString description;
    theory::GptShape shape;
    std::int64_t microBatch = 1;
};
std::vector<RunModelPreset> loadRunPresets();
std::optional<RunModelPreset> findRunPreset(const QString& id);

enum class RunField { Model, Ranks, Backend, Strategy, Steps, Capacity, Bucket, Prefetch, MaxInflight, Persistence, HybridGroup, MicroBatch };

struct FieldIssue {
    RunField field;
    QString message; // translated, names the reason
};

struct RunRequest {
    QString model = QStringLiteral("small");
    int ranks = 4;
    bool gpu = false; // the CUDA backend (not in this build)
    theory::Strategy strategy = theory::Strategy::Zero3;
    theory::PrecisionKind precision = theory::PrecisionKind::MixedBf16;
    bool checkpointing = false;
    int steps = 10;
    std::optional<std::uint64_t> capacityBytes;
    std::uint64_t bucketBytes = 25ull << 20;
    int prefetch = 1;
    bool reshardAfterForward = true;
    int maxInflight = 2;
    std::uint64_t persistenceThreshold = 0;
    int hybridGroup = 2;
    int microBatch = 0; // 0: the preset's
    std::uint64_t seed = 1;
};

inline constexpr int kMaxRanks = 64; // the rank view's columns
inline constexpr int kMaxSteps = 10000;

// Which knobs the chosen strategy reads (the others are disabled in the panel, not sent).
bool usesPrefetch(theory::Strategy s);
bool usesReshardAfterForward(theory::Strategy s);
bool usesMaxInflight(theory::Strategy s);
bool usesPersistence(theory::Strategy s);
bool usesHybridGroup(theory::Strategy s);

std::vector<FieldIssue> validate(const RunRequest& r);

// The same scenario the worker's theory reports: for previews before a run starts.
theory::Scenario scenarioOf(const RunRequest& r, const RunModelPreset& preset);

// shardscope-worker's arguments (the part after `mpirun … -np N worker`).
QStringList workerArguments(const RunRequest& r, const QString& socketPath);

// "64MiB", "1.5 GB", "1000000" → bytes; empty text → nullopt without error.
std::optional<std::uint64_t> parseByteText(const QString& text, QString* error);

// Why the GPU backend cannot be chosen: the CUDA probe's answer (cached; the probe dlopen()s
// libcudart and never throws), or — with a device — that the worker's GPU path is not wired.
QString gpuUnavailableReason();

} // namespace shardscope::widgets
