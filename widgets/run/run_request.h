#pragma once
// What the user asks the Ranks page to run: model preset, ranks, strategy and its knobs,
// precision, checkpointing, capacity budget, steps — the panel's values, turned into a
// runconfig::RunConfig (runconfig/run_config.h) for validation, previews and the worker's
// flags (toWorkerArgs). Here only what is the GUI's own: the GPU and mpirun checks of this
// machine, the rank view's column limit, and the translated wording of each problem.
#include "platform/cuda_probe.h"
#include "report/report.h"
#include "runconfig/problems.h"
#include "runconfig/run_config.h"
#include "theory/estimate.h"

#include <QString>
#include <QStringList>
#include <cstdint>
#include <optional>
#include <vector>

namespace shardscope::widgets {

// The worker's GPT presets, as the worker parses them (runconfig::modelPresets): nullptr
// when `id` is not one.
const runconfig::ModelPreset* findRunPreset(const QString& id);

// A field of the run settings is a field of the run configuration (runconfig/fields.h); the
// panel shows the ranks of both launch modes in one spin box (Ranks).
using RunField = runconfig::Field;

struct FieldIssue {
    RunField field;
    QString message; // translated, names the reason
};

struct RunRequest {
    QString model = QStringLiteral("small");
    int ranks = 4;
    bool gpu = false; // the CUDA backend (--backend cuda)
    // Ranks as threads of ONE worker process (--shared-device --ranks N), no mpirun: on the CPU
    // the shared-host communicators, on a GPU every rank shares GPU 0.
    bool threads = false;
    plan::Strategy strategy = plan::Strategy::Zero3;
    plan::PrecisionKind precision = plan::PrecisionKind::MixedBf16;
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
    Tier offloadOptimizer =
        Tier::Device; // --offload-optimizer: master, m, v (and grad shards) on the host
    Tier offloadParams = Tier::Device; // --offload-params: param shards on the host
    // The NVMe tier (either choice above = Tier::Nvme): --nvme-dir and DeepSpeed's aio settings.
    QString nvmeDir;
    std::uint64_t aioBlockBytes = runconfig::RunConfig{}.aioBlockBytes;
    int aioQueueDepth = static_cast<int>(runconfig::RunConfig{}.aioQueueDepth);
    bool usesNvme() const { return offloadOptimizer == Tier::Nvme || offloadParams == Tier::Nvme; }
    int tensorParallel = 1; // --tp: T of a T × D mesh of the ranks
    int pipeParallel = 1;   // --pp: P pipeline stages (the mesh is P × T × D)
    plan::PipeSchedule pipeSchedule = plan::PipeSchedule::OneFOneB; // --pp-schedule (P > 1)
    int virtualStages = 1; // --virtual-stages: chunks per rank (interleaved)
    int gradAccum = 1;     // --grad-accum: micro-steps per step (a pipeline's micro-batches)
    // Checkpoints (docs/checkpoints.md); empty paths: none.
    QString saveDir;    // --save DIR: saves after the last step (and every saveEvery steps)
    int saveEvery = 0;  // --save-every K; 0: only after the last step
    QString resumePath; // --resume DIR (its latest) or DIR/step-K
    // Settings the panel has no widget for (runconfig::FieldSpec::panel), kept as a loaded
    // recording, an imported configuration or a checkpoint set them so that a run with these
    // settings is that run: the seed, the learning rate, accumulation, the data file, … Only
    // values that differ from their defaults are kept; the panel lists them.
    std::vector<std::pair<runconfig::Field, runconfig::FieldValue>> carried;
    void carry(runconfig::Field field, runconfig::FieldValue value);
    // The carried settings as flags ("--lr 0.02", "--no-sync"), for the panel's note.
    QStringList carriedFlags() const;
};

inline constexpr int kMaxRanks = 64; // the rank view's columns (the worker takes more)
inline constexpr int kMaxSteps = static_cast<int>(runconfig::limitOf(runconfig::Field::Steps).max);

// What the GPU option can do on this machine: the CUDA probe's answer and what the worker
// beside the GUI was built with (the GUI never links CUDA; the build tells it).
struct GpuSupport {
    platform::CudaAvailability cuda;
    bool workerCuda = false;           // shardscope-worker has --backend cuda
    bool workerNccl = false;           // … and NCCL for one rank per GPU under mpirun
    static const GpuSupport& probed(); // this machine, probed once (dlopen, never throws)
};

std::vector<FieldIssue> validate(const RunRequest& r, const GpuSupport& gpu);
std::vector<FieldIssue> validate(const RunRequest& r); // with GpuSupport::probed()
// The NVMe tier's fields alone (part of validate).
std::vector<FieldIssue> validateNvme(const RunRequest& r);

// The run configuration these settings make (an unknown model keeps the name with a default
// shape; validate() reports it). Knobs the strategy does not read keep their defaults.
runconfig::RunConfig toRunConfig(const RunRequest& r);
// The settings of a run configuration: the panel's fields, everything else carried. A field the
// strategy does not read keeps the panel's value from `base`.
RunRequest fromRunConfig(const runconfig::RunConfig& config, const RunRequest& base = {});
// The settings a recording or report was made with (the run configuration's JSON as the
// handshake carries it, runconfig::toJson), so the settings panel can show the loaded run.
// Every value is type- and range-checked; nullopt with *why (translated) when one is not the
// panel's (a model that is no preset, more ranks than the rank view shows, …).
std::optional<RunRequest> requestFromConfigJson(const std::string& json, QString* why);
// A configuration problem in the panel's words (translated), and the field that shows it.
QString describe(const runconfig::Problem& p);
// The panel's field that shows a problem of `f` (the strategy's row for settings it has no
// widget for).
RunField fieldOf(runconfig::Field f);

// The listing of an imported configuration (report::ConfigImport) as it holds for a run of
// `now`: an applied key whose setting was changed in the panel since the import (`atImport`:
// the settings right after it) moves to ignored, saying so.
report::ConfigImport importListingAsRun(const report::ConfigImport& listing,
                                        const RunRequest& atImport, const RunRequest& now);

// shardscope-worker's arguments (runconfig::toWorkerArgs: the part after `mpirun … -np N
// worker`; with r.threads the whole command line after the worker, ending in --shared-device
// --ranks N). Jobs start through shardscope-cli, which builds the mpirun line (launch/).
QStringList workerArguments(const RunRequest& r, const QString& socketPath);

// "64MiB", "1.5 GB", "1000000" → bytes; empty text → nullopt without error.
std::optional<std::uint64_t> parseByteText(const QString& text, QString* error);

// Why the GPU backend cannot be chosen (the probe's reason, or a worker built without CUDA);
// empty when it can.
QString gpuUnavailableReason(const GpuSupport& gpu);
QString gpuUnavailableReason(); // GpuSupport::probed()
// Why ranks cannot run as mpirun processes here (empty when they can): `mpirun` (a name on
// $PATH or a path) is missing, or the worker was built without MPI (SHARDSCOPE_MPI=OFF).
// The Ranks page then runs them as threads of one worker process.
QString mpiUnavailableReason(const QString& mpirun = QStringLiteral("mpirun"));
// The GPU entry's tooltip: the reason, or the devices found ("CUDA: 1 device (runtime …)").
QString gpuDescription(const GpuSupport& gpu);

} // namespace shardscope::widgets
