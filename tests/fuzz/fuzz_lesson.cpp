// libFuzzer: the lesson file reader (backend/lessons) on arbitrary bytes. Every outcome is a
// lesson or a one-line error; a lesson that reads holds only bounded names and steps.
#include "lessons/lesson.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const auto parsed = shardscope::lessons::parseLesson(text);
    if (parsed) {
        if (parsed.lesson->steps.empty() ||
            parsed.lesson->steps.size() > shardscope::lessons::kMaxSteps)
            std::abort();
        for (const auto& step : parsed.lesson->steps)
            if (step.recording.size() > shardscope::lessons::kMaxNameBytes || step.text.en.empty())
                std::abort();
    } else if (parsed.error.empty() || parsed.error.find('\n') != std::string::npos) {
        std::abort();
    }
    (void)shardscope::lessons::placeholders(text);
    return 0;
}
