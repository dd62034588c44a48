#pragma once
// What theory refuses, named by the input's role rather than by any front end's spelling.
//
// Note: theory is shared by the CLI (flags), the GUI (form fields, translated) and the run
// configuration (worker flags). Each phrases an InputError its own way from field(): the CLI
// prefixes its flag, the GUI its field label. Messages here never contain a flag name.
#include "core/error.h"

#include <cstdint>
#include <string>

namespace shardscope::theory {

enum class InputField : std::uint8_t {
    Ranks,
    Params,
    ModelShape,
    MicroBatch,
    OptimizerBytes,
    HybridGroup,
    OffloadParam,
    Knobs,
    GpusPerNode,
    Nodes,
    LargestLayer,
    BufferFactor,
};

class InputError : public Error {
public:
    InputError(InputField field, const std::string& message)
        : Error(ErrorKind::InvalidArgument, message), field_(field) {}
    InputField field() const noexcept { return field_; }

private:
    InputField field_;
};

[[noreturn]] inline void throwInput(InputField field, const std::string& message) {
    throw InputError(field, message);
}

} // namespace shardscope::theory
