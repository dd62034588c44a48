#pragma once
// Helpers for the tests that need a CUDA device: the skip/fail decision, device arrays, random
// data and error measures.
#include "kernels/cuda/cuda_check.h"
#include "platform/cuda_probe.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <random>
#include <string>
#include <vector>

namespace shardscope::gputest {

inline const platform::CudaAvailability& cuda() {
    static const platform::CudaAvailability a = platform::probeCuda();
    return a;
}

inline bool expectGpu() {
    const char* v = std::getenv("SHARDSCOPE_EXPECT_GPU");
    return v && std::string(v) == "1";
}

// Skips the test without a device ("no CUDA device (cudaGetDeviceCount: …)"), unless
// SHARDSCOPE_EXPECT_GPU=1 says this machine has one: then a missing device is a failure.
#define SHARDSCOPE_REQUIRE_CUDA()                                                                  \
    do {                                                                                           \
        if (!::shardscope::gputest::cuda().available) {                                            \
            if (::shardscope::gputest::expectGpu())                                                \
                FAIL() << "SHARDSCOPE_EXPECT_GPU=1 but " << ::shardscope::gputest::cuda().reason;  \
            GTEST_SKIP() << ::shardscope::gputest::cuda().reason;                                  \
        }                                                                                          \
    } while (0)

#define SHARDSCOPE_REQUIRE_CUDA_DEVICES(n)                                                         \
    do {                                                                                           \
        SHARDSCOPE_REQUIRE_CUDA();                                                                 \
        if (::shardscope::gputest::cuda().deviceCount < (n))                                       \
            GTEST_SKIP() << "needs " << (n) << " CUDA devices, this machine has "                  \
                         << ::shardscope::gputest::cuda().deviceCount;                             \
    } while (0)

// Plain device memory for test data (not ledgered: the tests compare values, not bytes).
template <class T> class DeviceArray {
public:
    explicit DeviceArray(std::size_t n) : n_(n) {
        if (n_) CUDA_CHECK(cudaMalloc(&p_, n_ * sizeof(T)));
    }
    explicit DeviceArray(const std::vector<T>& host) : DeviceArray(host.size()) { upload(host); }
    ~DeviceArray() {
        if (p_) cudaFree(p_);
    }
    DeviceArray(const DeviceArray&) = delete;
    DeviceArray& operator=(const DeviceArray&) = delete;
    T* get() const { return static_cast<T*>(p_); }
    std::size_t size() const { return n_; }
    void upload(const std::vector<T>& host) {
        CUDA_CHECK(cudaMemcpy(p_, host.data(), std::min(n_, host.size()) * sizeof(T),
                              cudaMemcpyHostToDevice));
        // A pageable copy may return before its DMA lands, and the ops under test run on
        // non-blocking streams that do not wait for the legacy stream: wait here.
        CUDA_CHECK(cudaDeviceSynchronize());
    }
    // Waits for the whole device first: the ops under test run on other streams.
    std::vector<T> download() const {
        CUDA_CHECK(cudaDeviceSynchronize());
        std::vector<T> host(n_);
        if (n_) CUDA_CHECK(cudaMemcpy(host.data(), p_, n_ * sizeof(T), cudaMemcpyDeviceToHost));
        return host;
    }

private:
    void* p_ = nullptr;
    std::size_t n_;
};

inline std::vector<float> randomFloats(std::size_t n, unsigned seed, float scale = 1.0f) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> dist(0.0f, scale);
    std::vector<float> v(n);
    for (float& x : v)
        x = dist(rng);
    return v;
}

// max |a − b| / max |b|: a norm-wise relative error, stable where single elements are ~0.
inline double relError(const std::vector<float>& a, const std::vector<float>& b) {
    double num = 0.0, den = 0.0;
    for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
        num = std::max(num, std::fabs(static_cast<double>(a[i]) - static_cast<double>(b[i])));
        den = std::max(den, std::fabs(static_cast<double>(b[i])));
    }
    if (a.size() != b.size() || std::isnan(num)) return INFINITY;
    return den > 0 ? num / den : num;
}

// Number of elements whose bit patterns differ.
template <class T> std::size_t bitDifferences(const std::vector<T>& a, const std::vector<T>& b) {
    if (a.size() != b.size()) return std::max(a.size(), b.size());
    std::size_t diff = 0;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (std::memcmp(&a[i], &b[i], sizeof(T)) != 0) ++diff;
    return diff;
}

} // namespace shardscope::gputest
