// libFuzzer: the report JSON reader (run reports and compare reports, as the GUI's Compare page
// and `shardscope-cli compare` read them), and a config_import listing on its own (what the GUI
// hands `shardscope-cli run --config-import`). Every input gets a value or one line of error.
#include "report/report.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

using namespace shardscope;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    const auto run = report::parseRunReport(text);
    if (!run && run.error.empty()) __builtin_trap();
    if (run) (void)report::toJson(*run.value).dump();
    const auto compare = report::parseCompareReport(text);
    if (!compare && compare.error.empty()) __builtin_trap();
    if (compare) (void)report::toJson(*compare.value).dump();
    const auto listing = report::parseConfigImport(text);
    if (!listing && listing.error.empty()) __builtin_trap();
    if (listing &&
        report::parseConfigImport(report::toJson(*listing.value).dump()).value != listing.value)
        __builtin_trap();
    return 0;
}
