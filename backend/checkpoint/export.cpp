// The consolidated weights as safetensors: 8-byte little-endian header length, a JSON header
// (name → dtype, shape, data_offsets), raw little-endian data. Padding never appears: the
// checkpoint stores none.
#include "checkpoint/store.h"
#include "core/error.h"
#include "core/user_files.h"

#include <bit>
#include <filesystem>
#include <nlohmann/json.hpp>

namespace shardscope::checkpoint {

std::uint64_t exportSafetensors(const Opened& c, const std::string& out, bool optimizer,
                                const std::string& flag, const std::function<void()>& beforeUnit) {
    static_assert(std::endian::native == std::endian::little, "safetensors data is little-endian");
    const Metadata& m = c.meta;
    nlohmann::ordered_json header = nlohmann::ordered_json::object();
    header["__metadata__"] = {
        {"format", "pt"}, {"source", std::string(kFormatName)}, {"step", std::to_string(m.step)}};
    std::uint64_t at = 0;
    const int tensors = optimizer ? kStates : 1;
    for (const ParamEntry& p : m.params) {
        const nlohmann::json shape =
            p.rows == 1 ? nlohmann::json::array({p.cols}) : nlohmann::json::array({p.rows, p.cols});
        const std::uint64_t bytes = static_cast<std::uint64_t>(p.rows * p.cols) * sizeof(float);
        for (int s = 0; s < tensors; ++s) {
            const std::string name =
                s == 0 ? p.name
                       : p.name + "." + std::string(kStateNames[static_cast<std::size_t>(s)]);
            header[name] = {{"dtype", "F32"}, {"shape", shape}, {"data_offsets", {at, at + bytes}}};
            at += bytes;
        }
    }
    // The output replaces its path only at commit, after every read; inside the checkpoint folder
    // it could still replace a file of this step or of another one.
    if (touchesCheckpoint(out, c.root))
        throwInvalid(flag + ": '" + out + "' could replace a part of the checkpoint in '" + c.root +
                     "'; give a path outside its steps");
    std::string text = header.dump();
    while (text.size() % 8 != 0)
        text.push_back(' '); // data 8-byte aligned, as the writers do
    OutputFile file(out, flag);
    std::uint64_t len = text.size();
    char le[8];
    for (int i = 0; i < 8; ++i)
        le[i] = static_cast<char>((len >> (8 * i)) & 0xff);
    file.write(std::string_view(le, 8));
    file.write(text);
    // Unit by unit: memory is one unit's state, not the model's.
    for (std::size_t u = 0; u < m.units.size(); ++u) {
        if (beforeUnit) beforeUnit();
        const std::uint64_t n = m.units[u].elements;
        std::vector<float> master(n), mm(optimizer ? n : 0), vv(optimizer ? n : 0);
        const SliceTarget t{{static_cast<std::int32_t>(u), 0, n},
                            master.data(),
                            optimizer ? mm.data() : nullptr,
                            optimizer ? vv.data() : nullptr};
        load(c, std::span<const SliceTarget>(&t, 1));
        for (const ParamEntry& p : m.params) {
            if (static_cast<std::size_t>(p.unit) != u) continue;
            const std::size_t bytes = static_cast<std::size_t>(p.rows * p.cols) * sizeof(float);
            for (const std::vector<float>* v : {&master, &mm, &vv}) {
                if (v->empty()) continue;
                file.write(
                    std::string_view(reinterpret_cast<const char*>(v->data() + p.offset), bytes));
            }
        }
    }
    file.commit();
    return 8 + text.size() + at;
}

} // namespace shardscope::checkpoint
