#pragma once
// A naive double-precision GPT, written independently of backend/kernels (plain loops, no
// BLAS, no in-place tricks), used as the finite-difference reference by the gradient tests.
#include "model/data.h"
#include "plan/shape.h"
#include "plan/units.h"

#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

namespace shardscope::testref {

using Vec = std::vector<double>;

inline Vec embedding(const std::vector<std::int32_t>& ids, const double* wte, const double* wpe,
                     std::int64_t batch, std::int64_t seq, std::int64_t d) {
    Vec out(static_cast<std::size_t>(batch * seq * d));
    for (std::int64_t b = 0; b < batch; ++b)
        for (std::int64_t s = 0; s < seq; ++s)
            for (std::int64_t i = 0; i < d; ++i)
                out[static_cast<std::size_t>((b * seq + s) * d + i)] =
                    wte[ids[static_cast<std::size_t>(b * seq + s)] * d + i] + wpe[s * d + i];
    return out;
}

inline Vec layerNorm(const Vec& x, const double* gamma, const double* beta, std::int64_t rows,
                     std::int64_t d) {
    Vec out(x.size());
    for (std::int64_t r = 0; r < rows; ++r) {
        double mean = 0, var = 0;
        for (std::int64_t i = 0; i < d; ++i)
            mean += x[static_cast<std::size_t>(r * d + i)];
        mean /= static_cast<double>(d);
        for (std::int64_t i = 0; i < d; ++i) {
            const double c = x[static_cast<std::size_t>(r * d + i)] - mean;
            var += c * c;
        }
        var /= static_cast<double>(d);
        const double rstd = 1.0 / std::sqrt(var + 1e-5);
        for (std::int64_t i = 0; i < d; ++i) {
            const auto at = static_cast<std::size_t>(r * d + i);
            out[at] = (x[at] - mean) * rstd * gamma[i] + beta[i];
        }
    }
    return out;
}

// y[rows × out] = x[rows × in] · W[in × out] + bias (bias may be null).
inline Vec linear(const Vec& x, const double* w, const double* bias, std::int64_t rows,
                  std::int64_t in, std::int64_t out) {
    Vec y(static_cast<std::size_t>(rows * out));
    for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t j = 0; j < out; ++j) {
            double acc = bias ? bias[j] : 0.0;
            for (std::int64_t k = 0; k < in; ++k)
                acc += x[static_cast<std::size_t>(r * in + k)] * w[k * out + j];
            y[static_cast<std::size_t>(r * out + j)] = acc;
        }
    return y;
}

// Causal multi-head attention on qkv [B, S, 3d] → [B, S, d].
inline Vec attention(const Vec& qkv, std::int64_t batch, std::int64_t seq, std::int64_t heads,
                     std::int64_t hd) {
    const std::int64_t d = heads * hd;
    Vec out(static_cast<std::size_t>(batch * seq * d), 0.0);
    auto at = [&](std::int64_t b, std::int64_t s, std::int64_t part, std::int64_t h,
                  std::int64_t i) {
        return qkv[static_cast<std::size_t>((b * seq + s) * 3 * d + part * d + h * hd + i)];
    };
    for (std::int64_t b = 0; b < batch; ++b)
        for (std::int64_t h = 0; h < heads; ++h)
            for (std::int64_t i = 0; i < seq; ++i) {
                std::vector<double> score(static_cast<std::size_t>(i + 1));
                double maxv = -1e300;
                for (std::int64_t j = 0; j <= i; ++j) {
                    double dot = 0;
                    for (std::int64_t c = 0; c < hd; ++c)
                        dot += at(b, i, 0, h, c) * at(b, j, 1, h, c);
                    score[static_cast<std::size_t>(j)] = dot / std::sqrt(static_cast<double>(hd));
                    maxv = std::max(maxv, score[static_cast<std::size_t>(j)]);
                }
                double sum = 0;
                for (double& s : score)
                    sum += (s = std::exp(s - maxv));
                for (std::int64_t c = 0; c < hd; ++c) {
                    double acc = 0;
                    for (std::int64_t j = 0; j <= i; ++j)
                        acc += score[static_cast<std::size_t>(j)] / sum * at(b, j, 2, h, c);
                    out[static_cast<std::size_t>((b * seq + i) * d + h * hd + c)] = acc;
                }
            }
    return out;
}

inline Vec gelu(const Vec& x) {
    Vec y(x.size());
    const double c = std::sqrt(2.0 / 3.14159265358979323846);
    for (std::size_t i = 0; i < x.size(); ++i)
        y[i] = 0.5 * x[i] * (1.0 + std::tanh(c * (x[i] + 0.044715 * x[i] * x[i] * x[i])));
    return y;
}

inline double crossEntropy(const Vec& logits, const std::vector<std::int32_t>& targets,
                           std::int64_t rows, std::int64_t vocab) {
    double total = 0;
    for (std::int64_t r = 0; r < rows; ++r) {
        double maxv = -1e300, sum = 0;
        for (std::int64_t j = 0; j < vocab; ++j)
            maxv = std::max(maxv, logits[static_cast<std::size_t>(r * vocab + j)]);
        for (std::int64_t j = 0; j < vocab; ++j)
            sum += std::exp(logits[static_cast<std::size_t>(r * vocab + j)] - maxv);
        total += std::log(sum) + maxv -
                 logits[static_cast<std::size_t>(r * vocab + targets[static_cast<std::size_t>(r)])];
    }
    return total / static_cast<double>(rows);
}

inline Vec add(const Vec& a, const Vec& b) {
    Vec y(a.size());
    for (std::size_t i = 0; i < a.size(); ++i)
        y[i] = a[i] + b[i];
    return y;
}

// The whole GPT's mean loss in double; params[u] is unit u's flat buffer (plan::unitLayouts).
inline double gptLoss(const plan::GptShape& shape, const std::vector<Vec>& params,
                      const model::Batch& batch) {
    const auto units = plan::unitLayouts(shape);
    const std::int64_t d = shape.dModel, T = batch.sequences * batch.seqLen;
    auto p = [&](std::size_t u, const char* name) {
        return params[u].data() + units[u].slot(name).offset;
    };
    Vec x = embedding(batch.inputs, p(0, "wte"), p(0, "wpe"), batch.sequences, batch.seqLen, d);
    for (std::size_t u = 1; u + 1 < units.size(); ++u) {
        Vec h1 = layerNorm(x, p(u, "ln1.weight"), p(u, "ln1.bias"), T, d);
        Vec qkv = linear(h1, p(u, "attn.qkv.weight"), p(u, "attn.qkv.bias"), T, d, 3 * d);
        Vec a = attention(qkv, batch.sequences, batch.seqLen, shape.heads, d / shape.heads);
        x = add(x, linear(a, p(u, "attn.proj.weight"), p(u, "attn.proj.bias"), T, d, d));
        Vec h2 = layerNorm(x, p(u, "ln2.weight"), p(u, "ln2.bias"), T, d);
        Vec g = gelu(linear(h2, p(u, "mlp.fc.weight"), p(u, "mlp.fc.bias"), T, d, 4 * d));
        x = add(x, linear(g, p(u, "mlp.proj.weight"), p(u, "mlp.proj.bias"), T, 4 * d, d));
    }
    const std::size_t head = units.size() - 1;
    Vec hf = layerNorm(x, p(head, "ln_f.weight"), p(head, "ln_f.bias"), T, d);
    Vec logits = linear(hf, p(head, "lm_head.weight"), nullptr, T, d, shape.vocab);
    return crossEntropy(logits, batch.targets, T, shape.vocab);
}

// Central difference of f at x along coordinate i, in double.
inline double centralDifference(const std::function<double(const Vec&)>& f, Vec x, std::size_t i,
                                double h = 1e-5) {
    const double x0 = x[i];
    x[i] = x0 + h;
    const double up = f(x);
    x[i] = x0 - h;
    const double down = f(x);
    return (up - down) / (2 * h);
}

} // namespace shardscope::testref
