#pragma once
// A Hugging Face model's config.json → its exact parameter count, its largest layer and its
// sharding units, for model_type gpt2, llama, mistral and qwen2 (as transformers builds them):
//
//   gpt2     wte V·d, wpe P·d; per block ln_1, c_attn d·3d+3d, c_proj d·d+d, ln_2, c_fc d·I+I,
//            c_proj I·d+d (I = n_inner or 4d; LayerNorms 2d); ln_f 2d; lm_head tied to wte.
//   llama    embed V·d; per layer q d·H·hd, k and v d·KV·hd, o H·hd·d (biases with
//   mistral  attention_bias: llama only), gate/up d·I, down I·d (biases with mlp_bias: llama
//   qwen2    only), two RMSNorms d; final norm d; lm_head V·d unless tie_word_embeddings.
//            qwen2's q, k and v carry biases. hd = head_dim or d / H; KV = num_key_value_heads.
//
// Largest layer: as DeepSpeed's ZeRO-3 estimator counts it, the largest single module's own
// parameters (an embedding, the head — tied or not — or one linear with its bias).
// Units: the embedding (with gpt2's position embedding), each decoder layer, and the head (the
// final norm, plus lm_head when untied: a tied head's weight lives in the embedding's unit).
#include "plan/shape.h"

#include <cstdint>
#include <string>
#include <vector>

namespace shardscope::config_import {

struct HfModel {
    std::string modelType; // "gpt2", "llama", "mistral", "qwen2"
    std::int64_t layers = 0, hidden = 0, heads = 0, kvHeads = 0, headDim = 0, intermediate = 0,
                 vocab = 0;
    bool tiedEmbeddings = false;
    std::uint64_t params = 0;             // exact
    std::uint64_t largestLayerParams = 0; // DeepSpeed's largest_layer_params
    std::string largestLayer;             // its module, e.g. "model.embed_tokens"
    std::vector<plan::UnitParams> units;  // embedding, layer0 … layer{L-1}, head; Σ = params
};

// Error(InvalidArgument) with one line naming the key and the value: malformed JSON, a missing
// or mistyped field, a size out of range, heads that do not divide, and any other model_type
// (mixture-of-experts and the rest) by name.
HfModel parseHfConfig(const std::string& text, const std::string& source);

} // namespace shardscope::config_import
