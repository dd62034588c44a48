#pragma once
// Error checking for CUDA runtime and cuBLAS calls. Every call is checked, and every kernel
// launch is followed by CUDA_CHECK_LAUNCH(): a launch error (bad configuration, missing kernel
// image for this GPU's architecture) is only visible through cudaGetLastError, and an unchecked
// one surfaces much later as a confusing failure of an unrelated call.
//
// Failures throw shardscope::Error(Internal) naming file:line, the expression and CUDA's own
// name and text for the error, so a GPU run's first failure is readable in the rank's log line.
// This header includes the CUDA runtime API: only .cu files and CUDA-backed .cpp files use it.
#include "core/error.h"

#include <cuda_runtime_api.h>
#include <string>

namespace shardscope::kernels::cuda {

[[noreturn]] inline void throwCudaError(cudaError_t rc, const char* expr, const char* file,
                                        int line) {
    // The failing call also left rc in this thread's last-error slot: clear it (a no-op for
    // sticky errors), so a caller that catches this error is not handed it again by the next
    // CUDA_CHECK_LAUNCH as if an unrelated kernel launch had failed.
    (void)cudaGetLastError();
    throw Error(ErrorKind::Internal, std::string(file) + ":" + std::to_string(line) + ": " + expr +
                                         " failed: " + cudaGetErrorName(rc) + " (" +
                                         cudaGetErrorString(rc) + ")");
}

[[noreturn]] void throwCublasError(int status, const char* expr, const char* file, int line);

} // namespace shardscope::kernels::cuda

#define CUDA_CHECK(expr)                                                                           \
    do {                                                                                           \
        const cudaError_t shardscope_rc_ = (expr);                                                 \
        if (shardscope_rc_ != cudaSuccess)                                                         \
            ::shardscope::kernels::cuda::throwCudaError(shardscope_rc_, #expr, __FILE__,           \
                                                        __LINE__);                                 \
    } while (0)

// After a <<<…>>> launch: configuration errors are reported here, not by the launch itself.
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())

#define CUBLAS_CHECK(expr)                                                                         \
    do {                                                                                           \
        const int shardscope_st_ = static_cast<int>(expr);                                         \
        if (shardscope_st_ != 0)                                                                   \
            ::shardscope::kernels::cuda::throwCublasError(shardscope_st_, #expr, __FILE__,         \
                                                          __LINE__);                               \
    } while (0)
