#include "platform/cuda_probe.h"

#include <cstdlib>
#include <dlfcn.h>
#include <mutex>

namespace shardscope::platform {

namespace {

// The few runtime entry points the probe needs, by their C signatures (cudaError_t is an int
// enum), so no CUDA header is needed to build this file.
using GetCountFn = int (*)(int*);
using GetVersionFn = int (*)(int*);
using ErrorTextFn = const char* (*)(int);

struct Runtime {
    void* handle = nullptr;
    std::string path;
    std::string loadErrors; // dlerror() of every candidate tried, for the reason text
};

Runtime openRuntime(const std::vector<std::string>& candidates) {
    Runtime rt;
    // A runtime already in the process (a CUDA build links the shared libcudart) must be the
    // one asked: a second, different runtime would have its own view of the devices.
    for (const std::string& name : candidates) {
        if (void* h = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD)) {
            rt.handle = h;
            rt.path = name;
            return rt;
        }
    }
    for (const std::string& name : candidates) {
        // Never dlclose'd: the CUDA runtime does not support being unloaded and reloaded.
        if (void* h = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL)) {
            rt.handle = h;
            rt.path = name;
            return rt;
        }
        const char* err = dlerror();
        if (!rt.loadErrors.empty()) rt.loadErrors += "; ";
        rt.loadErrors += err ? err : name + ": not found";
    }
    return rt;
}

template <class Fn> Fn symbol(void* handle, const char* name) {
    return reinterpret_cast<Fn>(dlsym(handle, name));
}

std::vector<std::string> defaultCandidates() {
    const char* names[] = {"libcudart.so.13", "libcudart.so.12", "libcudart.so"};
    std::vector<std::string> out(std::begin(names), std::end(names));
    std::vector<std::string> dirs;
#ifdef SHARDSCOPE_CUDART_DIR
    dirs.emplace_back(SHARDSCOPE_CUDART_DIR); // the toolkit this build was configured with
#endif
    if (const char* home = std::getenv("CUDA_HOME")) dirs.push_back(std::string(home) + "/lib64");
    dirs.emplace_back("/usr/local/cuda/lib64");
    for (const std::string& dir : dirs)
        for (const char* name : names)
            out.push_back(dir + "/" + name);
    return out;
}

} // namespace

std::string cudaVersionText(int version) {
    if (version <= 0) return "none";
    return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

std::string describeDeviceCount(int error, int count, std::string_view errorName,
                                std::string_view errorText) {
    if (error == 0) {
        if (count > 0) return {};
        return "no CUDA device (cudaGetDeviceCount found 0 devices)";
    }
    std::string detail = "cudaGetDeviceCount: " + std::string(errorText) + " [" +
                         std::string(errorName) + ", error " + std::to_string(error) + "]";
    // 35: runtime newer than the driver, or no driver at all; 100: no GPU (or none visible,
    // e.g. CUDA_VISIBLE_DEVICES=""). Anything else is a broken installation worth reporting.
    if (error == 35 || error == 100) return "no CUDA device (" + detail + ")";
    return "no usable CUDA device (" + detail + ")";
}

CudaAvailability probeCuda(const std::vector<std::string>& libraryCandidates) {
    CudaAvailability a;
    // dlerror() is per thread but dlopen's search is not worth racing: one probe at a time.
    static std::mutex mutex;
    std::lock_guard lock(mutex);
    const Runtime rt = openRuntime(libraryCandidates);
    if (!rt.handle) {
        a.reason = "no CUDA runtime (libcudart could not be loaded: " +
                   (rt.loadErrors.empty() ? std::string("no candidates") : rt.loadErrors) + ")";
        return a;
    }
    a.library = rt.path;
    const auto getCount = symbol<GetCountFn>(rt.handle, "cudaGetDeviceCount");
    const auto errorName = symbol<ErrorTextFn>(rt.handle, "cudaGetErrorName");
    const auto errorText = symbol<ErrorTextFn>(rt.handle, "cudaGetErrorString");
    if (!getCount || !errorName || !errorText) {
        a.reason = "no CUDA runtime (" + rt.path + " lacks cudaGetDeviceCount)";
        return a;
    }
    if (const auto f = symbol<GetVersionFn>(rt.handle, "cudaRuntimeGetVersion"))
        f(&a.runtimeVersion);
    if (const auto f = symbol<GetVersionFn>(rt.handle, "cudaDriverGetVersion")) f(&a.driverVersion);
    int count = 0; // stays 0 when the call fails: the runtime leaves it unset
    const int rc = getCount(&count);
    if (rc != 0) count = 0;
    a.deviceCount = count;
    const char* name = errorName(rc);
    const char* text = errorText(rc);
    a.reason = describeDeviceCount(rc, count, name ? name : "?", text ? text : "?");
    a.available = a.reason.empty();
    return a;
}

CudaAvailability probeCuda() {
    return probeCuda(defaultCandidates());
}

std::string describe(const CudaAvailability& a) {
    if (!a.available) return "CUDA: " + a.reason;
    return "CUDA: " + std::to_string(a.deviceCount) +
           (a.deviceCount == 1 ? " device" : " devices") + " (runtime " +
           cudaVersionText(a.runtimeVersion) + ", driver " + cudaVersionText(a.driverVersion) + ")";
}

} // namespace shardscope::platform
