#pragma once
// Is there a usable CUDA device? Answered WITHOUT linking CUDA: the probe dlopen()s the CUDA
// runtime (libcudart) and calls cudaGetDeviceCount, so every binary — the GUI, a CPU-only
// worker, a build without nvcc — can ask, and a machine without libcudart or without a driver
// gets an answer with a reason instead of a crash or a load failure.
//
// Note: with an installed runtime but no driver (or a driver older than the runtime),
// cudaGetDeviceCount returns error 35 (cudaErrorInsufficientDriver) and leaves the count unset;
// without a GPU it returns 100 (cudaErrorNoDevice). Both mean "no CUDA device": say so and carry
// on with the CPU (docs/design.md, Running ranks).
#include <string>
#include <string_view>
#include <vector>

namespace shardscope::platform {

struct CudaAvailability {
    bool available = false;
    int deviceCount = 0;
    std::string
        reason; // why not (empty when available), e.g. "no CUDA device (cudaGetDeviceCount: …)"
    std::string library;    // the libcudart that answered (empty when none could be loaded)
    int runtimeVersion = 0; // cudaRuntimeGetVersion, e.g. 13000 (0 when unknown)
    int driverVersion =
        0; // cudaDriverGetVersion: the CUDA version the driver supports (0: no driver)
};

// Probes with the default candidates: an already-loaded libcudart first, then libcudart.so.13,
// .so.12, .so, then the same names in the CUDA toolkit's library folder known at build time and
// under $CUDA_HOME / /usr/local/cuda. Never throws.
CudaAvailability probeCuda();
// Probes with these library names or paths only, in order (tests use a missing one).
CudaAvailability probeCuda(const std::vector<std::string>& libraryCandidates);

// The reason text for a cudaGetDeviceCount outcome (pure; probeCuda uses it). Empty when
// error == 0 and count > 0.
std::string describeDeviceCount(int error, int count, std::string_view errorName,
                                std::string_view errorText);
// 13000 → "13.0", 12040 → "12.4"; 0 → "none".
std::string cudaVersionText(int version);
// One line for logs and `--backend` messages: "CUDA: 1 device (runtime 13.0, driver 13.0)" or
// "CUDA: no CUDA device (…)".
std::string describe(const CudaAvailability& a);

} // namespace shardscope::platform
