// libFuzzer: the configuration readers over arbitrary text — DeepSpeed's ds_config.json,
// Accelerate's YAML and Hugging Face's config.json — and the listing built from what they read.
// Bad input is Error(InvalidArgument / Io / Format); nothing else may escape, and what reads
// must account for every setting.
//
// Note: an Accelerate file may name a deepspeed_config_file; it is read relative to the working
// directory (run the target in an empty scratch folder, as `make fuzz` does).
#include "config_import/accelerate.h"
#include "config_import/ds_config.h"
#include "config_import/hf_model.h"
#include "config_import/import.h"
#include "core/error.h"
#include "runconfig/fields.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

using namespace shardscope;
using namespace shardscope::config_import;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    Context c;
    c.command = "run";
    c.worldSize = 1 + static_cast<int>(size % 8);
    c.hiddenSize = static_cast<std::int64_t>(size % 3) * 64;
    c.blockParams = c.hiddenSize * c.hiddenSize * 12;
    for (const std::string& flag : shardscope::runconfig::importableFlags())
        c.accepted.insert(flag);
    try {
        const Parsed p = parseDsConfig(text, "fuzz.json", c);
        const Imported i = finish(p, c, "fuzz.json");
        if (i.applied.size() + i.ignored.size() != p.settings.size() + p.ignored.size())
            std::abort();
    } catch (const Error&) {
    }
    try {
        const Parsed p = parseAccelerateConfig(text, "fuzz.yaml", c);
        (void)finish(p, c, "fuzz.yaml");
    } catch (const Error&) {
    }
    try {
        const HfModel m = parseHfConfig(text, "config.json");
        std::uint64_t sum = 0;
        for (const auto& u : m.units)
            sum += u.params;
        if (sum != m.params || m.largestLayerParams > m.params) std::abort();
    } catch (const Error&) {
    }
    return 0;
}
