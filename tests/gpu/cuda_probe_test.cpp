// The CUDA probe (platform/cuda_probe.h): works in every build (it dlopen()s libcudart), never
// crashes, and explains "no CUDA device". On a machine without a GPU or driver this runs the
// no-device path for real; with SHARDSCOPE_EXPECT_GPU=1 (scripts/gpu-check.sh) it insists on a
// device, so a broken probe cannot make every GPU test skip silently.
#include "platform/cuda_probe.h"

#include <cstdlib>
#include <gtest/gtest.h>
#include <iostream>
#include <string>

namespace shardscope::platform {
namespace {

bool expectGpu() {
    const char* v = std::getenv("SHARDSCOPE_EXPECT_GPU");
    return v && std::string(v) == "1";
}

TEST(gpuProbe, ReasonsNameTheCudaError) {
    EXPECT_EQ(describeDeviceCount(35, 0, "cudaErrorInsufficientDriver",
                                  "CUDA driver version is insufficient for CUDA runtime version"),
              "no CUDA device (cudaGetDeviceCount: CUDA driver version is insufficient for CUDA "
              "runtime version [cudaErrorInsufficientDriver, error 35])");
    EXPECT_EQ(
        describeDeviceCount(100, 0, "cudaErrorNoDevice", "no CUDA-capable device is detected")
            .rfind("no CUDA device (cudaGetDeviceCount: no CUDA-capable device is detected", 0),
        0u);
    EXPECT_EQ(describeDeviceCount(0, 0, "cudaSuccess", "no error"),
              "no CUDA device (cudaGetDeviceCount found 0 devices)");
    EXPECT_EQ(describeDeviceCount(0, 2, "cudaSuccess", "no error"), "");
    EXPECT_EQ(describeDeviceCount(999, 0, "cudaErrorUnknown", "unknown error")
                  .rfind("no usable CUDA device (", 0),
              0u);
    EXPECT_EQ(cudaVersionText(13000), "13.0");
    EXPECT_EQ(cudaVersionText(12040), "12.4");
    EXPECT_EQ(cudaVersionText(0), "none");
}

TEST(gpuProbe, AMissingRuntimeIsAReasonNotACrash) {
    const CudaAvailability a = probeCuda({"/nonexistent/libcudart.so.13"});
    EXPECT_FALSE(a.available);
    EXPECT_EQ(a.deviceCount, 0);
    EXPECT_EQ(a.reason.rfind("no CUDA runtime (libcudart could not be loaded: ", 0), 0u)
        << a.reason;
    EXPECT_NE(a.reason.find("/nonexistent/libcudart.so.13"), std::string::npos) << a.reason;
    EXPECT_EQ(describe(a), "CUDA: " + a.reason);
}

TEST(gpuProbe, ThisMachineGetsAConsistentAnswer) {
    const CudaAvailability a = probeCuda();
    std::cout << "probe: " << describe(a) << (a.library.empty() ? "" : " via " + a.library) << "\n";
    RecordProperty("cuda", describe(a));
    if (expectGpu()) {
        ASSERT_TRUE(a.available) << "SHARDSCOPE_EXPECT_GPU=1 but " << a.reason;
    }
    if (a.available) {
        EXPECT_GE(a.deviceCount, 1);
        EXPECT_TRUE(a.reason.empty());
        EXPECT_GT(a.runtimeVersion, 0);
        EXPECT_GT(a.driverVersion, 0) << "a device without a driver?";
        return;
    }
    // The no-device path: the count is 0 (cudaGetDeviceCount leaves it unset on error) and the
    // reason says why, naming the CUDA call and its error when the runtime could be loaded.
    EXPECT_EQ(a.deviceCount, 0);
    EXPECT_EQ(a.reason.rfind("no ", 0), 0u) << a.reason;
    if (a.library.empty()) {
        EXPECT_NE(a.reason.find("libcudart"), std::string::npos) << a.reason;
        return;
    }
    EXPECT_NE(a.reason.find("cudaGetDeviceCount"), std::string::npos) << a.reason;
    EXPECT_GT(a.runtimeVersion, 0);
    // No driver at all (cudaDriverGetVersion reports 0): the runtime must say error 35.
    if (a.driverVersion == 0) {
        EXPECT_NE(a.reason.find("cudaErrorInsufficientDriver, error 35"), std::string::npos)
            << a.reason;
    }
}

TEST(gpuProbe, ProbingTwiceGivesTheSameAnswer) {
    const CudaAvailability a = probeCuda(), b = probeCuda();
    EXPECT_EQ(a.available, b.available);
    EXPECT_EQ(a.deviceCount, b.deviceCount);
    EXPECT_EQ(a.reason, b.reason);
}

} // namespace
} // namespace shardscope::platform
