#pragma once
// What one training job runs: model, strategy and its knobs, precision, steps, I/O. Parsed from
// shardscope-worker's flags and written back to them (toWorkerArgs: the CLI and the GUI start
// the worker with these); validated in one place (problems.h), against one table of limits.
//
// Worker flags: workerFlagsHelp() (the worker's usage and `shardscope-cli run --help` print it).
//
// --tp T, --pp P: a P × T × D mesh of the world's ranks (D = ranks / (P·T); plan/mesh.h): TP
// groups are T consecutive ranks, DP groups stride across them within a stage, and the stages
// (consecutive layers, plan/pipeline.h) are the outermost blocks of T·D ranks; the strategy
// shards over the DP group. A pipelined step runs --grad-accum micro-batches (M) through the
// stages in --pp-schedule's order.
//
// The job's size is mpirun's -np, except with --shared-device: then the worker is ONE process
// (not under mpirun) that runs --ranks N ranks as threads — on one GPU with --backend cuda,
// or on the CPU (same protocol, shared-host communicators).
#include "plan/pipeline.h"
#include "runconfig/presets.h"
#include "theory/estimate.h"

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace shardscope::runconfig {

enum class Backend : std::uint8_t { Cpu, Cuda };
std::string_view backendName(Backend b); // "cpu", "cuda"

struct RunConfig {
    ModelPreset preset; // --model, with --micro-batch, --lr and --data applied
    plan::Strategy strategy = plan::Strategy::Ddp;
    std::int64_t steps = 1;
    std::uint64_t seed = 1; // data and initialisation
    plan::PrecisionKind precision = plan::PrecisionKind::MixedBf16;
    bool checkpointing = false;
    bool deterministic = false; // reductions summed in rank order: bitwise parity
    plan::Knobs knobs{};        // buckets, prefetch, reshard, in-flight, persistence,
                                // hybrid group, grad accumulation, no_sync
    std::optional<std::uint64_t> capacityBytes; // ledger budget per rank (device tier)
    plan::Offload offload{}; // --offload-optimizer device|host|nvme, --offload-params device|host
    std::string nvmeDir;     // --nvme-dir: the NVMe tier's files (one per rank)
    bool keepNvme = false;   // --keep-nvme: leave them behind
    std::uint64_t aioBlockBytes = 1 << 20; // --aio-block-bytes (DeepSpeed aio block_size)
    std::int64_t aioQueueDepth = 8;        // --aio-queue-depth (DeepSpeed aio queue_depth)
    std::optional<std::string> dataFile;   // byte-level training data (vocab 256)
    int worldSize = 1;                     // mpirun's -np, or --ranks with --shared-device
    Backend backend = Backend::Cpu;        // --backend
    bool sharedDevice = false;             // --shared-device: ranks are threads of one process
    int tensorParallel = 1;                // --tp: T of the P × T × D mesh
    int pipeParallel = 1;                  // --pp: P, the pipeline's stages
    plan::PipeSchedule pipeSchedule = plan::PipeSchedule::OneFOneB; // --pp-schedule
    int virtualStages = 1;     // --virtual-stages: V model chunks per pipeline rank (interleaved)
    int dataParallel() const { // D = ranks / (P·T)
        const int pt = std::max(tensorParallel, 1) * std::max(pipeParallel, 1);
        return worldSize / pt;
    }

    // Worker I/O and instrumentation.
    std::optional<std::string> streamPath;  // the parent's Unix socket
    std::optional<std::string> tracePath;   // recording (.sstrace)
    std::optional<std::string> jsonPath;    // report
    std::optional<std::string> weightsPath; // final fp32 weights, raw little-endian
    std::int64_t timeoutMs = 30000;         // collective deadline
    bool events = true;                     // --no-events: no per-event tracing

    // Checkpoints (docs/checkpoints.md).
    std::optional<std::string> saveDir;    // --save DIR: also after the last step
    std::int64_t saveEvery = 0;            // --save-every K: every K steps too (0: off)
    bool saveAsync = false;                // --save-async: write on a thread while training goes on
    std::optional<std::string> resumePath; // --resume DIR (its latest) or DIR/step-K
    // --resume: the saved run's learning rate, which the resume takes unless --lr says otherwise
    // (then the report notes the override). Read from the checkpoint, never written as a setting.
    std::optional<double> checkpointLearningRate;
    // --resume: the checkpoint's step, i.e. the steps done before this run (core/step_number.h).
    // Read from the checkpoint, never written as a setting.
    std::int64_t stepsBefore = 0;
    // bf16 linear layers on this CPU's bf16 units (plan::Knobs::bf16Gemm): what the machine can
    // do, resolved by the worker from its CPU, never written as a setting.
    bool bf16Gemm = false;
};

// Throws Error(InvalidArgument) naming the flag (unknown flags, missing --model/--strategy/
// --steps, values out of range, a hybrid group that does not divide the ranks, --ranks without
// --shared-device or the reverse, --shared-device in a job of several processes, …) and
// Error(Io) for a --data file that cannot be read or is not a regular file, and for an output
// that cannot be written (core/user_files.h: checkOutputPath); Error(InvalidArgument) for a flag
// given twice, --hybrid-group with a strategy other than fsdp_hybrid, --data shorter than the
// context + 1 or past kMaxDataFileBytes, and two of --data/--trace/--json/--weights-out naming
// one file.
// --resume is opened and checked here (a checkpoint of this model: exit 2 otherwise, Error(Format)
// naming the file); the run then takes the checkpoint's seed, and --steps 0 (a conversion) is
// allowed with --resume and --save.
// `worldSize` is the number of processes of the job (mpirun's -np; 1 without mpirun).
RunConfig parseRunConfig(std::span<const std::string> workerArgs, int worldSize);
// The flags that parse back into the same configuration (worldSize aside); values equal to
// their defaults are left out.
std::vector<std::string> toWorkerArgs(const RunConfig& config);
// The configuration as JSON (the handshake's base): names as the flags spell them.
nlohmann::json toJson(const RunConfig& config);
// The worker's flags as help text, from the field table (fields.h), the one text the worker's
// usage and `shardscope-cli run --help` print; flags in `ownedByCaller` (the CLI's launcher
// flags, which it lists itself) are left out. Lines stay within 100 columns.
std::string workerFlagsHelp(const std::vector<std::string>& ownedByCaller = {});

// The theory engine's view of this run: with --tp the shape is one TP rank's slice and the
// ranks are the DP group's; with --pp a rank of pipeline stage `stage` (its units, messages).
theory::Scenario scenarioOf(const RunConfig& config, int stage = 0);

} // namespace shardscope::runconfig
