// libFuzzer: the worker's run-config parser over an argument list split from the input (NUL or
// newline separate arguments; the first byte picks the world size). Bad input is
// Error(InvalidArgument or Io); nothing else may escape.
//
// Note: the parser checks output paths and reads --data; '/' is replaced so every path stays in
// the working directory (run the target in an empty scratch folder, as `make fuzz` does).
#include "core/error.h"
#include "runconfig/run_config.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

using namespace shardscope;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    const int world = 1 + data[0] % 8;
    std::vector<std::string> args(1);
    for (std::size_t i = 1; i < size; ++i) {
        const char c = static_cast<char>(data[i]);
        if (c == '\0' || c == '\n')
            args.emplace_back();
        else
            args.back().push_back(c == '/' ? '_' : c);
    }
    try {
        const runconfig::RunConfig config = runconfig::parseRunConfig(args, world);
        // What parses must parse again from the flags it prints (the launcher relies on it).
        (void)runconfig::parseRunConfig(runconfig::toWorkerArgs(config), world);
    } catch (const Error&) {
    }
    return 0;
}
