// LayerNorm forward/backward. Row statistics are accumulated in double: the rows are short
// (d ≤ a few thousand) and the extra precision keeps the gradient check tight for free.
#include "kernels/cpu/ops.h"

#include <cmath>

namespace shardscope::kernels {

void layerNormForward(const float* x, const float* gamma, const float* beta, float* out,
                      float* mean, float* rstd, std::int64_t rows, std::int64_t d) {
    for (std::int64_t r = 0; r < rows; ++r) {
        const float* xr = x + r * d;
        double sum = 0.0;
        for (std::int64_t i = 0; i < d; ++i) sum += static_cast<double>(xr[i]);
        const double mu = sum / static_cast<double>(d);
        double var = 0.0;
        for (std::int64_t i = 0; i < d; ++i) {
            const double c = static_cast<double>(xr[i]) - mu;
            var += c * c;
        }
        var /= static_cast<double>(d);
        const float m = static_cast<float>(mu);
        const float s = static_cast<float>(1.0 / std::sqrt(var + static_cast<double>(kLayerNormEps)));
        float* o = out + r * d;
        for (std::int64_t i = 0; i < d; ++i) o[i] = (xr[i] - m) * s * gamma[i] + beta[i];
        mean[r] = m;
        rstd[r] = s;
    }
}

void layerNormBackward(const float* dout, const float* x, const float* mean, const float* rstd,
                       const float* gamma, float* dx, float* dgamma, float* dbeta,
                       std::int64_t rows, std::int64_t d) {
    for (std::int64_t r = 0; r < rows; ++r) {
        const float* xr = x + r * d;
        const float* dy = dout + r * d;
        const float m = mean[r];
        const float s = rstd[r];
        // dx = rstd · (g − mean(g) − x̂ · mean(g · x̂)) with g = dy · gamma.
        double sumG = 0.0;
        double sumGX = 0.0;
        for (std::int64_t i = 0; i < d; ++i) {
            const float xhat = (xr[i] - m) * s;
            const float g = dy[i] * gamma[i];
            sumG += static_cast<double>(g);
            sumGX += static_cast<double>(g * xhat);
            dgamma[i] += dy[i] * xhat;
            dbeta[i] += dy[i];
        }
        const float meanG = static_cast<float>(sumG / static_cast<double>(d));
        const float meanGX = static_cast<float>(sumGX / static_cast<double>(d));
        float* dxr = dx + r * d;
        for (std::int64_t i = 0; i < d; ++i) {
            const float xhat = (xr[i] - m) * s;
            dxr[i] += s * (dy[i] * gamma[i] - meanG - xhat * meanGX);
        }
    }
}

} // namespace shardscope::kernels
