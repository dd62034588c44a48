#include "estimate_common.h"

#include "core/error.h"

#include <array>
#include <charconv>
#include <cstdio>
#include <sstream>
#include <vector>

namespace shardscope::cli {

namespace {

std::string scaled(std::uint64_t bytes, double base, const std::array<const char*, 6>& units) {
    double value = static_cast<double>(bytes);
    std::size_t u = 0;
    while (value >= base && u + 1 < units.size()) {
        value /= base;
        ++u;
    }
    char buf[64];
    if (u == 0)
        std::snprintf(buf, sizeof buf, "%llu %s", static_cast<unsigned long long>(bytes), units[0]);
    else
        std::snprintf(buf, sizeof buf, "%.2f %s", value, units[u]);
    return buf;
}

} // namespace

std::string humanBytes(std::uint64_t bytes) {
    if (bytes < 1000) return std::to_string(bytes) + " B";
    return scaled(bytes, 1000.0, {"B", "KB", "MB", "GB", "TB", "PB"}) + " (" +
           scaled(bytes, 1024.0, {"B", "KiB", "MiB", "GiB", "TiB", "PiB"}) + ")";
}

std::optional<plan::GptShape> modelShapeFlag(const Args& args) {
    const auto text = args.value("--model-shape");
    if (!text) return std::nullopt;
    std::vector<std::int64_t> fields;
    std::stringstream in(*text);
    std::string item;
    while (std::getline(in, item, ',')) {
        std::int64_t v = 0;
        auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), v);
        if (ec != std::errc() || end != item.data() + item.size() || item.empty())
            throwInvalid("--model-shape expects layers,d,heads,vocab,seq (integers), got '" +
                         *text + "'");
        fields.push_back(v);
    }
    if (fields.size() != 5)
        throwInvalid("--model-shape expects 5 fields layers,d,heads,vocab,seq, got '" + *text +
                     "'");
    plan::GptShape shape{fields[0], fields[1], fields[2], fields[3], fields[4]};
    try {
        plan::validate(shape);
    } catch (const Error& e) {
        throwInvalid(std::string("--model-shape: ") + e.what());
    }
    return shape;
}

Tier tierFlag(const Args& args, const std::string& flag) {
    const auto text = args.value(flag);
    if (!text) return Tier::Device;
    if (*text == "cpu") return Tier::Host; // DeepSpeed's name for the host tier
    if (auto tier = parseTier(*text)) return *tier;
    throwInvalid(flag + " expects device, host or nvme, got '" + *text + "'");
}

void rejectFlags(const Args& args, std::initializer_list<const char*> flags,
                 const std::string& why) {
    for (const char* flag : flags)
        if (args.has(flag)) throwInvalid(std::string(flag) + " " + why);
}

void forEachListed(const std::string& flag, const std::string& text, const std::string& known,
                   const std::function<bool(const std::string&)>& each) {
    std::stringstream in(text);
    for (std::string name; std::getline(in, name, ',');) {
        if (name.empty()) break;
        if (!each(name)) throwInvalid(flag + ": unknown name '" + name + "' (" + known + ")");
    }
    if (text.empty() || text.front() == ',' || text.back() == ',' ||
        text.find(",,") != std::string::npos)
        throwInvalid(flag + ": an empty name in '" + text + "' (" + known + ")");
}

} // namespace shardscope::cli
