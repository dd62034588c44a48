#include "checkpoint/format.h"

#include "checkpoint/sha256.h"
#include "core/error.h"
#include "core/json_strict.h"
#include "plan/pipeline.h"
#include "plan/strategy.h"
#include "plan/units.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <nlohmann/json.hpp>

namespace shardscope::checkpoint {
namespace {

using nlohmann::json;

constexpr int kMaxDepth = 8; // metadata.json nests five levels
constexpr std::size_t kMaxNameChars = 256;
constexpr std::int64_t kMaxLayers = static_cast<std::int64_t>(kMaxUnits) - 2;

// Reads one JSON object's fields with bounds; every failure names the field's path.
class Fields {
public:
    Fields(const json& j, std::string path, const std::string& where)
        : j_(j), path_(std::move(path)), where_(where) {
        if (!j_.is_object()) fail("is not an object");
    }
    [[noreturn]] void fail(const std::string& what) const {
        throw Error(ErrorKind::Format, where_ + ": " +
                                           (path_.empty() ? std::string("the metadata") : path_) +
                                           " " + what);
    }
    const json& at(const char* key) const {
        const auto it = j_.find(key);
        if (it == j_.end()) Fields(j_, join(key), where_).fail("is missing");
        return *it;
    }
    std::int64_t integer(const char* key, std::int64_t lo, std::int64_t hi) const {
        const json& v = at(key);
        std::int64_t x = 0;
        if (v.is_number_unsigned()) {
            const auto u = v.get<std::uint64_t>();
            if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
                sub(key).fail("is out of range");
            x = static_cast<std::int64_t>(u);
        } else if (v.is_number_integer()) {
            x = v.get<std::int64_t>();
        } else {
            sub(key).fail("is not an integer");
        }
        if (x < lo || x > hi)
            sub(key).fail("is " + std::to_string(x) + ", outside [" + std::to_string(lo) + ", " +
                          std::to_string(hi) + "]");
        return x;
    }
    std::uint64_t count(const char* key, std::uint64_t hi) const {
        return static_cast<std::uint64_t>(integer(key, 0, static_cast<std::int64_t>(hi)));
    }
    double real(const char* key) const {
        const json& v = at(key);
        if (!v.is_number()) sub(key).fail("is not a number");
        const double d = v.get<double>();
        if (!std::isfinite(d)) sub(key).fail("is not finite");
        return d;
    }
    std::string text(const char* key, std::size_t maxChars = kMaxNameChars) const {
        const json& v = at(key);
        if (!v.is_string()) sub(key).fail("is not a string");
        const auto& s = v.get_ref<const std::string&>();
        if (s.size() > maxChars)
            sub(key).fail("is longer than " + std::to_string(maxChars) + " characters");
        return s;
    }
    const json& array(const char* key, std::size_t maxItems) const {
        const json& v = at(key);
        if (!v.is_array()) sub(key).fail("is not an array");
        if (v.size() > maxItems)
            sub(key).fail("has " + std::to_string(v.size()) + " entries, more than " +
                          std::to_string(maxItems));
        return v;
    }
    Fields sub(const char* key) const { return Fields(j_, join(key), where_, true); }
    Fields object(const char* key) const { return Fields(at(key), join(key), where_); }
    Fields item(const json& v, const char* key, std::size_t i) const {
        return Fields(v, join(key) + "[" + std::to_string(i) + "]", where_);
    }
    std::string sha(const char* key) const {
        std::string s = text(key, 64);
        if (s.size() != 64 || !std::all_of(s.begin(), s.end(), [](char c) {
                return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
            }))
            sub(key).fail("is not a sha256 (64 lowercase hex digits)");
        return s;
    }

private:
    Fields(const json& j, std::string path, const std::string& where, bool)
        : j_(j), path_(std::move(path)), where_(where) {}
    std::string join(const char* key) const {
        return path_.empty() ? std::string(key) : path_ + "." + key;
    }
    const json& j_;
    std::string path_;
    const std::string& where_;
};

json rangeJson(const Range& r, int version) {
    json j = {{"unit", r.unit}, {"begin", r.begin}, {"end", r.end}};
    if (version == 1)
        j["sha256"] = r.sha256;
    else
        j["chunks"] = r.chunks;
    return j;
}

json fileJson(const DataFile& f, int version) {
    json ranges = json::array();
    for (const Range& r : f.ranges)
        ranges.push_back(rangeJson(r, version));
    return {{"name", f.name},
            {"rank", f.rank},
            {"bytes", f.bytes},
            {"sha256", f.sha256},
            {"ranges", ranges}};
}

DataFile fileOf(const Fields& f, int version, std::uint64_t chunkElements) {
    DataFile d;
    d.name = f.text("name");
    d.rank = static_cast<std::int32_t>(f.integer("rank", 0, kMaxWorldSize - 1));
    d.bytes = f.count("bytes", kMaxParams * kBytesPerElement);
    d.sha256 = f.sha("sha256");
    const json& ranges = f.array("ranges", kMaxRangesPerFile);
    for (std::size_t k = 0; k < ranges.size(); ++k) {
        const Fields r = f.item(ranges[k], "ranges", k);
        Range range{static_cast<std::int32_t>(r.integer("unit", 0, kMaxUnits)),
                    r.count("begin", kMaxParams),
                    r.count("end", kMaxParams),
                    {},
                    {}};
        if (version == 1) {
            range.sha256 = r.sha("sha256");
        } else {
            // The count is checked against the range's own size before any hash is kept.
            const std::uint64_t want =
                range.end > range.begin ? kStates * chunksPerBlock(range.elements(), chunkElements)
                                        : 0;
            const json& chunks = r.array("chunks", kMaxMetadataBytes / 64);
            if (chunks.size() != want)
                r.sub("chunks").fail("has " + std::to_string(chunks.size()) +
                                     " hashes; elements [" + std::to_string(range.begin) + ", " +
                                     std::to_string(range.end) + ") in chunks of " +
                                     std::to_string(chunkElements) + " make " +
                                     std::to_string(want));
            range.chunks.reserve(chunks.size());
            for (std::size_t c = 0; c < chunks.size(); ++c) {
                const json& h = chunks[c];
                if (!h.is_string() || h.get_ref<const std::string&>().size() != 64 ||
                    !std::all_of(h.get_ref<const std::string&>().begin(),
                                 h.get_ref<const std::string&>().end(), [](char ch) {
                                     return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f');
                                 }))
                    r.sub("chunks").fail("entry " + std::to_string(c) +
                                         " is not a sha256 (64 lowercase hex digits)");
                range.chunks.push_back(h.get<std::string>());
            }
        }
        d.ranges.push_back(std::move(range));
    }
    if (version >= 2 && chunkListSha256(d) != d.sha256)
        f.sub("sha256").fail("does not match the file's chunk hashes");
    return d;
}

void checkModel(const Metadata& m, const Metadata& expected, const Fields& top) {
    if (m.units.size() != expected.units.size())
        top.fail("lists " + std::to_string(m.units.size()) + " units; the model shape has " +
                 std::to_string(expected.units.size()));
    for (std::size_t u = 0; u < m.units.size(); ++u) {
        const UnitEntry& a = m.units[u];
        const UnitEntry& b = expected.units[u];
        if (a.name != b.name || a.elements != b.elements)
            top.fail("unit " + std::to_string(u) + " is '" + a.name + "' of " +
                     std::to_string(a.elements) + " elements; the model shape has '" + b.name +
                     "' of " + std::to_string(b.elements));
        if (a.padded < a.elements ||
            a.padded - a.elements >= static_cast<std::uint64_t>(m.worldSize))
            top.fail("unit '" + a.name + "' has a padded size of " + std::to_string(a.padded) +
                     " for " + std::to_string(a.elements) + " elements");
    }
    if (m.params.size() != expected.params.size())
        top.fail("lists " + std::to_string(m.params.size()) + " parameters; the model shape has " +
                 std::to_string(expected.params.size()));
    for (std::size_t p = 0; p < m.params.size(); ++p) {
        const ParamEntry& a = m.params[p];
        const ParamEntry& b = expected.params[p];
        if (a.name != b.name || a.unit != b.unit || a.offset != b.offset || a.rows != b.rows ||
            a.cols != b.cols)
            top.fail("parameter " + std::to_string(p) + " ('" + a.name +
                     "') does not match the model shape's '" + b.name + "'");
    }
}

// Every unit covered exactly once by the files' ranges; sizes add up.
void checkFiles(const Metadata& m, const Fields& top) {
    std::vector<std::vector<std::pair<std::uint64_t, std::uint64_t>>> cover(m.units.size());
    std::vector<bool> seen(static_cast<std::size_t>(m.worldSize), false);
    for (const DataFile& f : m.files) {
        if (f.rank < 0 || f.rank >= m.worldSize)
            top.fail("file '" + f.name + "' names rank " + std::to_string(f.rank) +
                     " of a world of " + std::to_string(m.worldSize));
        if (seen[static_cast<std::size_t>(f.rank)])
            top.fail("lists rank " + std::to_string(f.rank) + "'s file twice");
        seen[static_cast<std::size_t>(f.rank)] = true;
        if (f.name != dataFileName(f.rank))
            top.fail("file '" + f.name + "' should be named '" + dataFileName(f.rank) + "'");
        std::uint64_t bytes = 0;
        for (const Range& r : f.ranges) {
            if (r.unit < 0 || static_cast<std::size_t>(r.unit) >= m.units.size())
                top.fail("file '" + f.name + "' names unit " + std::to_string(r.unit));
            const UnitEntry& u = m.units[static_cast<std::size_t>(r.unit)];
            if (r.begin >= r.end || r.end > u.elements)
                top.fail("file '" + f.name + "' holds elements [" + std::to_string(r.begin) + ", " +
                         std::to_string(r.end) + ") of unit '" + u.name + "' (" +
                         std::to_string(u.elements) + " elements)");
            cover[static_cast<std::size_t>(r.unit)].push_back({r.begin, r.end});
            bytes += r.bytes(); // ≤ 4098 ranges × 2^40 × 12: no overflow
        }
        if (bytes != f.bytes)
            top.fail("file '" + f.name + "' is said to be " + std::to_string(f.bytes) +
                     " bytes; its ranges make " + std::to_string(bytes));
    }
    for (std::size_t u = 0; u < cover.size(); ++u) {
        auto& c = cover[u];
        std::sort(c.begin(), c.end());
        std::uint64_t at = 0;
        for (const auto& [b, e] : c) {
            if (b != at)
                top.fail("has files that " +
                         std::string(b < at
                                         ? "hold elements of unit '" + m.units[u].name + "' twice"
                                         : "miss elements of unit '" + m.units[u].name + "'") +
                         " at " + std::to_string(std::min(b, at)));
            at = e;
        }
        if (at != m.units[u].elements)
            top.fail("has files that miss elements of unit '" + m.units[u].name + "' from " +
                     std::to_string(at));
    }
    // Every rank writes a file (an empty one when it owns nothing), so world_size is what saved it.
    for (std::size_t r = 0; r < seen.size(); ++r)
        if (!seen[r])
            top.fail("lists no file for rank " + std::to_string(r) + " of a world of " +
                     std::to_string(m.worldSize));
}

} // namespace

std::string chunkListSha256(const DataFile& f) {
    Sha256 sha;
    for (const Range& r : f.ranges)
        for (const std::string& h : r.chunks)
            sha.update(h);
    return sha.hex();
}

std::string dataFileName(int rank) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "rank-%05d.bin", rank);
    return buf;
}

std::string stepDirName(std::int64_t step) {
    return "step-" + std::to_string(step);
}

void describeModel(Metadata& m, const plan::GptShape& shape, std::uint64_t shards) {
    m.shape = shape;
    m.paramCount = plan::paramCount(shape);
    m.units.clear();
    m.params.clear();
    const std::vector<plan::UnitLayout> layouts = plan::unitLayouts(shape);
    for (std::size_t u = 0; u < layouts.size(); ++u) {
        const plan::UnitLayout& l = layouts[u];
        m.units.push_back({l.name(), l.elements(), l.paddedElements(shards)});
        for (const plan::TensorSlot& s : l.slots())
            m.params.push_back(
                {l.name() + "." + s.name, static_cast<std::int32_t>(u), s.offset, s.rows, s.cols});
    }
}

std::string toJson(const Metadata& m) {
    json units = json::array(), params = json::array(), files = json::array();
    for (const UnitEntry& u : m.units)
        units.push_back({{"name", u.name}, {"elements", u.elements}, {"padded", u.padded}});
    for (const ParamEntry& p : m.params)
        params.push_back({{"name", p.name},
                          {"unit", p.unit},
                          {"offset", p.offset},
                          {"rows", p.rows},
                          {"cols", p.cols}});
    for (const DataFile& f : m.files)
        files.push_back(fileJson(f, m.version));
    json j = {
        {"format", std::string(kFormatName)},
        {"version", m.version},
        {"model",
         {{"layers", m.shape.layers},
          {"d_model", m.shape.dModel},
          {"heads", m.shape.heads},
          {"vocab", m.shape.vocab},
          {"seq_len", m.shape.seqLen},
          {"param_count", m.paramCount}}},
        {"dtypes",
         {{"master", "F32"}, {"exp_avg", "F32"}, {"exp_avg_sq", "F32"}, {"compute", m.precision}}},
        {"strategy", m.strategy},
        {"world_size", m.worldSize},
        {"hybrid_group", m.hybridGroup},
        {"pipe_parallel", m.pipeParallel},
        {"step", m.step},
        {"data",
         {{"position", m.dataPosition},
          {"seed", m.seed},
          {"micro_batch", m.microBatch},
          {"grad_accum", m.gradAccum}}},
        {"rng",
         {{"seed", m.seed},
          {"note", "initialisation and data are pure functions of (seed, step)"}}},
        {"optimizer",
         {{"name", "adamw"},
          {"lr", m.optimizer.learningRate},
          {"beta1", m.optimizer.beta1},
          {"beta2", m.optimizer.beta2},
          {"eps", m.optimizer.eps},
          {"weight_decay", m.optimizer.weightDecay},
          {"clip_norm", m.optimizer.clipNorm},
          {"step", m.optimizer.step}}},
        {"units", units},
        {"params", params},
        {"files", files},
    };
    if (m.version >= 2) j["hash_chunk_elements"] = m.chunkElements;
    return j.dump(1) + "\n";
}

std::string dataFileJson(const DataFile& f, int version) {
    return fileJson(f, version).dump();
}

DataFile parseDataFile(std::string_view text, int version, std::uint64_t chunkElements,
                       const std::string& where) {
    json j;
    try {
        j = json::parse(text.begin(), text.end(), StrictJson(kMaxDepth));
    } catch (const JsonRefused& e) {
        throw Error(ErrorKind::Format, where + ": " + e.what());
    } catch (const std::exception&) {
        throw Error(ErrorKind::Format, where + ": not valid JSON");
    }
    return fileOf(Fields(j, "file", where), version, chunkElements);
}

Metadata parseMetadata(std::string_view text, const std::string& where) {
    if (text.size() > kMaxMetadataBytes)
        throw Error(ErrorKind::Format,
                    where + ": larger than " + std::to_string(kMaxMetadataBytes) + " bytes");
    json j;
    try {
        j = json::parse(text.begin(), text.end(), StrictJson(kMaxDepth));
    } catch (const JsonRefused& e) {
        throw Error(ErrorKind::Format, where + ": " + e.what());
    } catch (const std::exception&) {
        throw Error(ErrorKind::Format, where + ": not valid JSON (not a checkpoint's metadata)");
    }
    const Fields top(j, "", where);
    if (!j.contains("format") || !j["format"].is_string() ||
        j["format"].get<std::string>() != kFormatName)
        top.fail("is not a ShardScope checkpoint (its \"format\" is not \"" +
                 std::string(kFormatName) + "\")");
    Metadata m;
    m.version = static_cast<int>(top.integer("version", 0, 1 << 30));
    if (m.version < kOldestFormatVersion || m.version > kFormatVersion)
        top.fail("has format version " + std::to_string(m.version) +
                 "; this build reads versions " + std::to_string(kOldestFormatVersion) + " to " +
                 std::to_string(kFormatVersion));
    if (m.version >= 2)
        m.chunkElements = static_cast<std::uint64_t>(
            top.integer("hash_chunk_elements", static_cast<std::int64_t>(kMinChunkElements),
                        static_cast<std::int64_t>(kMaxChunkElements)));
    const Fields model = top.object("model");
    m.shape.layers = model.integer("layers", 1, kMaxLayers);
    m.shape.dModel = model.integer("d_model", 1, 1 << 20);
    m.shape.heads = model.integer("heads", 1, 1 << 20);
    m.shape.vocab = model.integer("vocab", 1, 1 << 24);
    m.shape.seqLen = model.integer("seq_len", 1, 1 << 24);
    m.paramCount = model.count("param_count", kMaxParams);
    try {
        plan::validate(m.shape);
    } catch (const Error& e) {
        model.fail(std::string("is not a valid shape: ") + e.what());
    }
    if (plan::paramCount(m.shape) != m.paramCount)
        model.fail("says " + std::to_string(m.paramCount) + " parameters; its shape has " +
                   std::to_string(plan::paramCount(m.shape)));
    m.strategy = top.text("strategy");
    if (!plan::parseStrategy(m.strategy))
        top.fail("names an unknown strategy '" + m.strategy + "'");
    m.worldSize = static_cast<int>(top.integer("world_size", 1, kMaxWorldSize));
    m.hybridGroup = static_cast<int>(top.integer("hybrid_group", 0, m.worldSize));
    if (j.contains("pipe_parallel")) {
        m.pipeParallel = static_cast<int>(top.integer("pipe_parallel", 1, plan::kMaxPipeStages));
        if (m.worldSize % m.pipeParallel != 0)
            top.sub("pipe_parallel")
                .fail("(" + std::to_string(m.pipeParallel) + ") does not divide world_size " +
                      std::to_string(m.worldSize));
    }
    m.step = top.integer("step", 0, kMaxStep);
    const Fields data = top.object("data");
    m.dataPosition = data.integer("position", 0, kMaxStep);
    m.seed = static_cast<std::uint64_t>(
        data.integer("seed", 0, std::numeric_limits<std::int64_t>::max()));
    m.microBatch = data.integer("micro_batch", 1, 1 << 20);
    m.gradAccum = static_cast<int>(data.integer("grad_accum", 1, 1 << 20));
    const Fields dtypes = top.object("dtypes");
    for (std::string_view s : kStateNames)
        if (dtypes.text(std::string(s).c_str()) != "F32")
            dtypes.fail("stores '" + std::string(s) + "' as something other than F32");
    m.precision = dtypes.text("compute");
    if (m.precision != "bf16" && m.precision != "fp32")
        dtypes.fail("has an unknown compute precision '" + m.precision + "'");
    const Fields opt = top.object("optimizer");
    if (opt.text("name") != "adamw")
        opt.sub("name").fail("names an optimizer this build does not run (adamw)");
    m.optimizer = {opt.real("lr"),
                   opt.real("beta1"),
                   opt.real("beta2"),
                   opt.real("eps"),
                   opt.real("weight_decay"),
                   opt.real("clip_norm"),
                   opt.integer("step", 0, kMaxStep)};
    // Values AdamW cannot continue from (a resume would train on them) are damage.
    const OptimizerState& o = m.optimizer;
    if (!(o.learningRate > 0 && o.learningRate <= 10)) opt.sub("lr").fail("is not in (0, 10]");
    if (!(o.beta1 >= 0 && o.beta1 < 1)) opt.sub("beta1").fail("is not in [0, 1)");
    if (!(o.beta2 >= 0 && o.beta2 < 1)) opt.sub("beta2").fail("is not in [0, 1)");
    if (!(o.eps > 0)) opt.sub("eps").fail("is not more than 0");
    if (!(o.weightDecay >= 0)) opt.sub("weight_decay").fail("is negative");

    const json& units = top.array("units", kMaxUnits);
    for (std::size_t i = 0; i < units.size(); ++i) {
        const Fields u = top.item(units[i], "units", i);
        m.units.push_back({u.text("name"), u.count("elements", kMaxParams),
                           u.count("padded", kMaxParams + kMaxWorldSize)});
    }
    const json& params = top.array("params", kMaxUnits * 16);
    for (std::size_t i = 0; i < params.size(); ++i) {
        const Fields p = top.item(params[i], "params", i);
        m.params.push_back({p.text("name"),
                            static_cast<std::int32_t>(p.integer("unit", 0, kMaxUnits)),
                            p.count("offset", kMaxParams), p.integer("rows", 1, 1 << 30),
                            p.integer("cols", 1, 1 << 30)});
    }
    Metadata expected;
    describeModel(expected, m.shape, 1);
    checkModel(m, expected, top);

    const json& files = top.array("files", static_cast<std::size_t>(m.worldSize));
    for (std::size_t i = 0; i < files.size(); ++i) {
        m.files.push_back(fileOf(top.item(files[i], "files", i), m.version, m.chunkElements));
    }
    checkFiles(m, top);
    return m;
}

} // namespace shardscope::checkpoint
