// libFuzzer: a checkpoint's metadata.json reader (every count bounded and cross-checked before it
// sizes anything). Every input is a Metadata or one Error(Format) line; an accepted one writes
// back to the same metadata, and its resharding plan covers each unit exactly.
#include "checkpoint/format.h"
#include "checkpoint/reshard.h"
#include "core/error.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

using namespace shardscope;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    checkpoint::Metadata m;
    try {
        m = checkpoint::parseMetadata(text, "metadata.json");
    } catch (const Error& e) {
        if (e.kind() != ErrorKind::Format ||
            std::string_view(e.what()).find('\n') != std::string_view::npos)
            __builtin_trap();
        return 0;
    }
    const std::string again = checkpoint::toJson(m);
    if (checkpoint::toJson(checkpoint::parseMetadata(again, "again")) != again) __builtin_trap();
    // A file entry as the save's gather carries it reads back the same (chunk counts and the
    // hash list checked again).
    for (const checkpoint::DataFile& f : m.files) {
        const std::string entry = checkpoint::dataFileJson(f, m.version);
        if (checkpoint::dataFileJson(
                checkpoint::parseDataFile(entry, m.version, m.chunkElements, "entry"), m.version) !=
            entry)
            __builtin_trap();
    }
    std::vector<checkpoint::Span> needs;
    for (std::size_t u = 0; u < m.units.size(); ++u)
        needs.push_back({static_cast<std::int32_t>(u), 0, m.units[u].elements});
    std::uint64_t covered = 0;
    for (const checkpoint::Read& r : checkpoint::planReads(m, needs))
        covered += r.end - r.begin;
    if (covered != m.paramCount) __builtin_trap();
    return 0;
}
