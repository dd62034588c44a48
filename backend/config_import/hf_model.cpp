#include "config_import/hf_model.h"

#include "config_import/import.h"
#include "core/error.h"
#include "core/json_strict.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

namespace shardscope::config_import {

namespace {

using nlohmann::json;

// Bounds that keep every product and the total below 2^63 (vocab·hidden < 2^45, a layer < 2^46
// with heads·head_dim ≤ 2^22, layers·layer < 2^58).
constexpr std::int64_t kMaxVocab = std::int64_t{1} << 24;
constexpr std::int64_t kMaxHidden = std::int64_t{1} << 20;
constexpr std::int64_t kMaxLayers = std::int64_t{1} << 12;
constexpr std::int64_t kMaxHeads = std::int64_t{1} << 14;
constexpr std::int64_t kMaxAttentionWidth = 4 * kMaxHidden; // heads × head_dim

class HfReader {
public:
    HfReader(const json& root, std::string source) : j_(root), source_(std::move(source)) {}

    [[noreturn]] void bad(const std::string& key, const json& v, const std::string& what) const {
        throwInvalid(source_ + ": " + key + " = " + shownJson(v) + ": " + what);
    }
    std::int64_t integer(const std::string& key, std::int64_t min, std::int64_t max) const {
        const auto it = j_.find(key);
        if (it == j_.end()) throwInvalid(source_ + ": " + key + " is missing");
        const json& v = *it;
        if (!v.is_number_integer()) bad(key, v, "must be a whole number");
        if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(max))
            bad(key, v, "must be in " + std::to_string(min) + "–" + std::to_string(max));
        const std::int64_t n = v.get<std::int64_t>();
        if (n < min || n > max)
            bad(key, v, "must be in " + std::to_string(min) + "–" + std::to_string(max));
        return n;
    }
    // An optional integer (null or absent: the default).
    std::int64_t integerOr(const std::string& key, std::int64_t fallback, std::int64_t min,
                           std::int64_t max) const {
        const auto it = j_.find(key);
        if (it == j_.end() || it->is_null()) return fallback;
        return integer(key, min, max);
    }
    bool boolean(const std::string& key, bool fallback) const {
        const auto it = j_.find(key);
        if (it == j_.end() || it->is_null()) return fallback;
        if (!it->is_boolean()) bad(key, *it, "must be true or false");
        return it->get<bool>();
    }
    std::string text(const std::string& key) const {
        const auto it = j_.find(key);
        if (it == j_.end()) throwInvalid(source_ + ": " + key + " is missing");
        if (!it->is_string()) bad(key, *it, "must be a string");
        return it->get<std::string>();
    }

    [[noreturn]] void fail(const std::string& what) const { throwInvalid(source_ + ": " + what); }

private:
    const json& j_;
    std::string source_;
};

struct Counter {
    HfModel& m;
    void largest(const std::string& module, std::uint64_t params) {
        if (params > m.largestLayerParams) {
            m.largestLayerParams = params;
            m.largestLayer = module;
        }
    }
};

void countGpt2(const HfReader& r, HfModel& m) {
    m.vocab = r.integer("vocab_size", 1, kMaxVocab);
    m.hidden = r.integer("n_embd", 1, kMaxHidden);
    m.layers = r.integer("n_layer", 1, kMaxLayers);
    m.heads = r.integer("n_head", 1, kMaxHeads);
    const std::int64_t positions = r.integer("n_positions", 1, kMaxVocab);
    m.intermediate = r.integerOr("n_inner", 4 * m.hidden, 1, 4 * kMaxHidden);
    if (m.hidden % m.heads != 0)
        r.fail("n_embd " + std::to_string(m.hidden) + " is not a multiple of n_head " +
               std::to_string(m.heads));
    m.kvHeads = m.heads;
    m.headDim = m.hidden / m.heads;
    m.tiedEmbeddings = r.boolean("tie_word_embeddings", true);
    const auto d = static_cast<std::uint64_t>(m.hidden),
               inner = static_cast<std::uint64_t>(m.intermediate);
    const std::uint64_t wte = static_cast<std::uint64_t>(m.vocab) * d,
                        wpe = static_cast<std::uint64_t>(positions) * d;
    const std::uint64_t cAttn = d * 3 * d + 3 * d, attnProj = d * d + d, cFc = d * inner + inner,
                        mlpProj = inner * d + d;
    const std::uint64_t block = 2 * d + cAttn + attnProj + 2 * d + cFc + mlpProj;
    Counter c{m};
    c.largest("transformer.wte", wte);
    c.largest("transformer.wpe", wpe);
    c.largest("lm_head", wte); // tied or not, the head's weight is V·d
    c.largest("transformer.h.0.attn.c_attn", cAttn);
    c.largest("transformer.h.0.attn.c_proj", attnProj);
    c.largest("transformer.h.0.mlp.c_fc", cFc);
    c.largest("transformer.h.0.mlp.c_proj", mlpProj);
    m.units.push_back({"embedding", wte + wpe});
    for (std::int64_t l = 0; l < m.layers; ++l)
        m.units.push_back({"layer" + std::to_string(l), block});
    m.units.push_back({"head", 2 * d + (m.tiedEmbeddings ? 0 : wte)});
}

void countLlamaFamily(const HfReader& r, HfModel& m) {
    m.vocab = r.integer("vocab_size", 1, kMaxVocab);
    m.hidden = r.integer("hidden_size", 1, kMaxHidden);
    m.layers = r.integer("num_hidden_layers", 1, kMaxLayers);
    m.heads = r.integer("num_attention_heads", 1, kMaxHeads);
    m.kvHeads = r.integerOr("num_key_value_heads", m.heads, 1, kMaxHeads);
    m.intermediate = r.integer("intermediate_size", 1, 4 * kMaxHidden);
    if (m.heads % m.kvHeads != 0)
        r.fail("num_attention_heads " + std::to_string(m.heads) +
               " is not a multiple of num_key_value_heads " + std::to_string(m.kvHeads));
    const bool hasHeadDim = m.hidden % m.heads == 0;
    m.headDim = r.integerOr("head_dim", hasHeadDim ? m.hidden / m.heads : 0, 1, kMaxHidden);
    if (m.headDim == 0)
        r.fail("hidden_size " + std::to_string(m.hidden) +
               " is not a multiple of num_attention_heads " + std::to_string(m.heads) +
               " and head_dim is not given");
    // head_dim is bounded on its own: its product with the heads is what sizes q, k, v and o.
    if (m.heads * m.headDim > kMaxAttentionWidth)
        r.fail("num_attention_heads " + std::to_string(m.heads) + " × head_dim " +
               std::to_string(m.headDim) + " = " + std::to_string(m.heads * m.headDim) +
               " is more than " + std::to_string(kMaxAttentionWidth));
    m.tiedEmbeddings = r.boolean("tie_word_embeddings", false);
    const bool qkvBias =
        m.modelType == "qwen2" || (m.modelType == "llama" && r.boolean("attention_bias", false));
    const bool oBias = m.modelType == "llama" && r.boolean("attention_bias", false);
    const bool mlpBias = m.modelType == "llama" && r.boolean("mlp_bias", false);
    const auto d = static_cast<std::uint64_t>(m.hidden),
               inner = static_cast<std::uint64_t>(m.intermediate);
    const std::uint64_t qOut = static_cast<std::uint64_t>(m.heads * m.headDim),
                        kvOut = static_cast<std::uint64_t>(m.kvHeads * m.headDim);
    const std::uint64_t q = d * qOut + (qkvBias ? qOut : 0), k = d * kvOut + (qkvBias ? kvOut : 0),
                        o = qOut * d + (oBias ? d : 0);
    const std::uint64_t gate = d * inner + (mlpBias ? inner : 0),
                        down = inner * d + (mlpBias ? d : 0);
    const std::uint64_t layer = q + 2 * k + o + 2 * gate + down + 2 * d;
    const std::uint64_t embed = static_cast<std::uint64_t>(m.vocab) * d;
    Counter c{m};
    c.largest("model.embed_tokens", embed);
    c.largest("lm_head", embed);
    c.largest("model.layers.0.self_attn.q_proj", q);
    c.largest("model.layers.0.self_attn.k_proj", k);
    c.largest("model.layers.0.self_attn.o_proj", o);
    c.largest("model.layers.0.mlp.gate_proj", gate);
    c.largest("model.layers.0.mlp.down_proj", down);
    m.units.push_back({"embedding", embed});
    for (std::int64_t l = 0; l < m.layers; ++l)
        m.units.push_back({"layer" + std::to_string(l), layer});
    m.units.push_back({"head", d + (m.tiedEmbeddings ? 0 : embed)});
}

} // namespace

HfModel parseHfConfig(const std::string& text, const std::string& source) {
    json root;
    try {
        root = json::parse(text, StrictJson());
    } catch (const JsonRefused& e) {
        throwInvalid(source + ": " + e.what());
    } catch (const json::parse_error& e) {
        throwInvalid(source + ": not valid JSON at byte " + std::to_string(e.byte));
    } catch (const json::exception& e) { // a number past double's range (1e400) and the like
        throwInvalid(source + ": not valid JSON (" +
                     std::string(e.what()).substr(std::string(e.what()).rfind(']') + 2) + ")");
    }
    if (!root.is_object()) throwInvalid(source + ": a model config must be a JSON object");
    const HfReader r(root, source);
    HfModel m;
    m.modelType = r.text("model_type");
    if (m.modelType == "gpt2")
        countGpt2(r, m);
    else if (m.modelType == "llama" || m.modelType == "mistral" || m.modelType == "qwen2")
        countLlamaFamily(r, m);
    else {
        std::string shown = m.modelType.substr(0, 40);
        throwInvalid(source + ": model_type '" + shown +
                     "' is not one ShardScope counts exactly (gpt2, llama, mistral, qwen2)");
    }
    for (const plan::UnitParams& u : m.units)
        m.params += u.params;
    return m;
}

} // namespace shardscope::config_import
