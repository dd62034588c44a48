// libFuzzer: a run configuration read back from its JSON (runconfig::configFromJson, what the
// GUI shows for an opened recording). Bad input is Error(InvalidArgument); nothing else may
// escape, and what reads writes back the same JSON (toJson ∘ configFromJson is the identity on
// its image).
#include "core/error.h"
#include "runconfig/config_json.h"
#include "runconfig/problems.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

using namespace shardscope;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const nlohmann::json j = nlohmann::json::parse(
        std::string(reinterpret_cast<const char*>(data), size), nullptr, false);
    if (j.is_discarded()) return 0;
    try {
        const runconfig::RunConfig config = runconfig::configFromJson(j);
        (void)runconfig::validate(config);
        const nlohmann::json once = runconfig::toJson(config);
        if (runconfig::toJson(runconfig::configFromJson(once)) != once) std::abort();
    } catch (const Error&) {
    }
    return 0;
}
