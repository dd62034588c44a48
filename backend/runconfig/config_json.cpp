#include "runconfig/config_json.h"

#include "core/error.h"
#include "runconfig/problems.h"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace shardscope::runconfig {
namespace {

[[noreturn]] void refuse(std::string_view key, const std::string& why) {
    throw Error(ErrorKind::InvalidArgument, "configuration: \"" + std::string(key) + "\" " + why);
}

// The value at a dotted key ("knobs.prefetch"), or nullptr when it or a parent is missing or
// null; a parent that is not an object is refused.
const nlohmann::json* at(const nlohmann::json& j, std::string_view key) {
    const nlohmann::json* node = &j;
    std::size_t start = 0;
    while (true) {
        const std::size_t dot = key.find('.', start);
        const std::string part(key.substr(start, dot - start));
        if (!node->is_object()) refuse(key.substr(0, start - 1), "is not an object");
        const auto it = node->find(part);
        if (it == node->end() || it->is_null()) return nullptr;
        node = &*it;
        if (dot == std::string_view::npos) return node;
        start = dot + 1;
    }
}

std::string range(std::int64_t lo, std::int64_t hi) {
    return "is out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
}

// A JSON value as the table's kind reads it. A whole number equal to the value the field holds
// already (its default) is taken as it is: recordings carry defaults of knobs that the strategy
// does not read, such as a hybrid group of 0.
FieldValue jsonValue(const FieldSpec& s, const nlohmann::json& v, const FieldValue& current,
                     std::int64_t lo) {
    switch (s.kind) {
    case ValueKind::Integer:
    case ValueKind::Bytes: {
        if (!v.is_number_integer()) refuse(s.key, "is not an integer");
        if (v.is_number_unsigned() && v.get<std::uint64_t>() > INT64_MAX)
            refuse(s.key, range(lo, s.max));
        const std::int64_t x = v.get<std::int64_t>();
        if (current == FieldValue(x)) return x;
        if (x < lo || x > s.max) refuse(s.key, range(lo, s.max));
        return x;
    }
    case ValueKind::Real: {
        if (!v.is_number()) refuse(s.key, "is not a number");
        const double x = v.get<double>();
        if (!(x > 0.0 && x <= static_cast<double>(s.max)))
            refuse(s.key, "is out of range (0, " + std::to_string(s.max) + "]");
        return x;
    }
    case ValueKind::Switch:
    case ValueKind::Bit:
        if (!v.is_boolean()) refuse(s.key, "is not true or false");
        return v.get<bool>();
    case ValueKind::Choice:
    case ValueKind::Text: {
        if (!v.is_string()) refuse(s.key, "is not a string");
        std::string text = v.get<std::string>();
        // An empty folder is no folder (recordings write "nvme_dir": "" without the NVMe tier);
        // a save or resume without one names nothing to save to or resume.
        if (text.empty()) {
            if (s.field == Field::Save) refuse(s.key, "is missing or empty");
            if (s.field == Field::Resume || s.kind == ValueKind::Choice) refuse(s.key, "is empty");
            return {};
        }
        if (s.kind == ValueKind::Choice) {
            const std::vector<std::string> choices = choicesOf(s.field);
            if (std::find(choices.begin(), choices.end(), text) == choices.end()) {
                std::string list;
                for (const std::string& c : choices)
                    list += (list.empty() ? "" : ", ") + c;
                refuse(s.key, "names no choice of " + list + " ('" + text.substr(0, 64) + "')");
            }
        }
        return text;
    }
    }
    return {};
}

} // namespace

RunConfig configFromJson(const nlohmann::json& j) {
    if (!j.is_object()) throw Error(ErrorKind::InvalidArgument, "configuration: not a JSON object");
    RunConfig c;
    const bool resumes = at(j, "resume") != nullptr;
    if (const nlohmann::json* save = at(j, "save"); save && !at(j, "save.dir"))
        refuse("save.dir", "is missing or empty");
    // In the table's order: the preset first, as the flags are read.
    for (const FieldSpec& s : kFields) {
        if (s.key.empty()) continue;
        const nlohmann::json* v = at(j, s.key);
        if (!v) {
            if (s.field == Field::Model || s.field == Field::Strategy) refuse(s.key, "is missing");
            continue;
        }
        // Older recordings name the synthetic tokens "synthetic"; a file of that name trained a
        // byte-level model (vocabulary 256), which synthetic tokens never are.
        if (s.field == Field::Data && v->is_string() && v->get<std::string>() == "synthetic") {
            const nlohmann::json* vocab = at(j, "shape.vocab");
            if (!vocab || !vocab->is_number_integer() || vocab->get<std::int64_t>() != 256)
                continue;
        }
        // 0 steps: a conversion of the resumed checkpoint; 0 saves: only after the last step.
        std::int64_t lo = s.min;
        if ((s.field == Field::Steps && resumes) || s.field == Field::SaveEvery) lo = 0;
        setField(c, s.field, jsonValue(s, *v, getField(c, s.field), lo));
    }
    if (const nlohmann::json* v = at(j, "knobs.allgather_bucket_bytes")) {
        FieldSpec gather = specOf(Field::BucketBytes);
        gather.key = "knobs.allgather_bucket_bytes";
        c.knobs.allGatherBucketBytes = static_cast<std::uint64_t>(
            std::get<std::int64_t>(jsonValue(gather, *v, FieldValue(), gather.min)));
    }
    // The handshake's: the worker's bf16 linear layers on its CPU's bf16 units (not a setting).
    if (const nlohmann::json* v = at(j, "bf16_gemm")) {
        if (!v->is_boolean()) refuse("bf16_gemm", "is not true or false");
        c.bf16Gemm = v->get<bool>();
    }
    return c;
}

} // namespace shardscope::runconfig
