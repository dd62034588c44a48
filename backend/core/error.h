#pragma once
// One error type for the backend. The kind decides the CLI exit code:
// bad input (flags, configs, files, recordings) is exit 2; everything else is 1.
#include "core/printable.h"

#include <cstdint>
#include <stdexcept>
#include <string>

namespace shardscope {

enum class ErrorKind {
    InvalidArgument, // a flag, config value or preset the user gave is wrong
    Io,              // a file could not be read or written
    Format,          // a recording, checkpoint or JSON file is malformed
    OutOfMemory,     // an allocation exceeded the capacity budget
    Comm,            // a collective failed or a peer died / timed out
    Internal,
};

// The message is kept printable (core/printable.h): text quoted from a file or the wire (a NUL, a
// broken UTF-8 byte, an escape sequence) reaches every front end as one whole, safe line.
class Error : public std::runtime_error {
public:
    Error(ErrorKind kind, const std::string& message)
        : std::runtime_error(printableText(message, SIZE_MAX)), kind_(kind) {}
    ErrorKind kind() const noexcept { return kind_; }
    bool isUserInput() const noexcept {
        return kind_ == ErrorKind::InvalidArgument || kind_ == ErrorKind::Io ||
               kind_ == ErrorKind::Format;
    }

private:
    ErrorKind kind_;
};

[[noreturn]] inline void throwInvalid(const std::string& message) {
    throw Error(ErrorKind::InvalidArgument, message);
}

} // namespace shardscope
