#pragma once
// AdamW's settings (Loshchilov & Hutter; PyTorch's torch.optim.AdamW semantics) and global-norm
// gradient clipping.
namespace shardscope::train {

struct AdamWConfig {
    double learningRate = 1e-3;
    double beta1 = 0.9;
    double beta2 = 0.95;
    double eps = 1e-8;
    double weightDecay = 0.1; // decoupled; applied only where the layout says `decay`
    double clipNorm = 1.0;    // global L2 norm limit; ≤ 0 disables clipping
};

// The clipping coefficient every gradient is scaled by: min(1, clipNorm / (‖g‖ + 1e-6)), as
// torch.nn.utils.clip_grad_norm_; 1 when clipping is off (clipNorm ≤ 0) or the norm is not
// finite. The update itself is kernels/cpu/adamw.h (host scalars + one elementwise update),
// which both device backends run.
double clipCoefficient(double globalNorm, double clipNorm);

} // namespace shardscope::train
