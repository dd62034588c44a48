// libFuzzer: the predict request/answer codec (`shardscope-cli predict` over stdin/stdout).
#include "core/error.h"
#include "report/prediction.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

using namespace shardscope;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const auto request = report::parsePredictRequest(text);
    if (!request && request.error.empty()) __builtin_trap();
    if (request) (void)report::predictRequestJson(*request.value).dump();
    const auto answer = report::parsePredictAnswer(text);
    if (!answer && answer.error.empty()) __builtin_trap();
    if (answer) (void)report::predictAnswerJson(*answer.value).dump();
    return 0;
}
