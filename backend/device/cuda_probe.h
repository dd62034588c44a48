#pragma once
// Forwarding header: the CUDA probe is platform vocabulary (platform/cuda_probe.h, library
// shardscope::platform). Kept only until every includer names platform/ directly.
#include "platform/cuda_probe.h"

namespace shardscope::device {
using platform::CudaAvailability;
using platform::cudaVersionText;
using platform::describe;
using platform::describeDeviceCount;
using platform::probeCuda;
} // namespace shardscope::device
