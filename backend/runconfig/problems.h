#pragma once
// Validation of a RunConfig as data: which field, what is wrong, the values involved. Each front
// end phrases a Problem itself — the worker and the CLI with flag names (describeForFlags), the
// GUI with tr() and its own field labels — so no message is rewritten after the fact.
//
// Note: the limits are fields.h's table. parseRunConfig reads each flag against it, validate()
// checks a RunConfig built any other way (the GUI's panel, JSON) against it, and the GUI sets its
// spin boxes from it: CLI, worker and GUI accept the same values.
#include "runconfig/fields.h"

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace shardscope::runconfig {

struct RunConfig;

enum class Code : std::uint8_t {
    OutOfRange,  // value outside [min, max]
    UnknownName, // text: the name given (model, strategy, precision, backend)
    NotADivisor, // value: the hybrid group or T; max: the number it must divide (text: what,
                 // for --tp: "ranks", "attention heads", "MLP width")
    ContradictsStrategy,   // the field's value cannot hold for this strategy (reshard with
                           // SHARD_GRAD_OP)
    NotForStrategy,        // the strategy does not have this option (no_sync outside FSDP)
    Theory,                // text: the theory engine's own check (theory::validate), verbatim
    OffloadNotForStrategy, // text: the strategy; the optimizer needs a sharded optimizer, params
                           // sharded params
    OffloadNeedsBf16,      // offload keeps fp32 master + bf16 params: not with --precision fp32
    OffloadTierNotBuilt,   // text: the tier (nvme) this build cannot run (no liburing)
    NeedsFlag,             // the field needs another one: text is the flag it needs
    CheckpointUnsupported, // --save/--resume with a layout the checkpoint format does not describe:
                           // text names it
    Pipeline,              // text: what is wrong with the pipeline, one line naming the flags
};

struct Problem {
    Field field;
    Code code;
    std::int64_t value = 0;
    std::int64_t min = 0;
    std::int64_t max = 0;
    std::string text;
    bool operator==(const Problem&) const = default;
};

// Every problem of a configuration (empty: it can run): ranges, the strategy's options, the
// hybrid group dividing the ranks, then the theory engine's checks.
std::vector<Problem> validate(const RunConfig& config);

// One line naming the flag; `sharedDevice`: the ranks are --ranks (else mpirun's -np).
std::string describeForFlags(const Problem& problem, bool sharedDevice);

} // namespace shardscope::runconfig
