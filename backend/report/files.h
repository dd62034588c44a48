#pragma once
// The files a run leaves besides its recording: reports written atomically, and the final fp32
// weights (--weights-out) that `compare` reads back to measure |Δ| against DDP.
#include <string>
#include <vector>

namespace shardscope::report {

// tmp + rename, so a reader never sees half a file. Throws Error(Io) naming `flag`.
void writeTextFile(const std::string& path, const std::string& text, const std::string& flag);
// Every unit's unpadded fp32 weights, little-endian, unit order, written atomically.
void writeWeightsFile(const std::string& path, const std::vector<std::vector<float>>& weights);
// A --weights-out file back (all units concatenated); throws Error(Io) / Error(Format) when
// unreadable or not a whole number of floats.
std::vector<float> readWeightsFile(const std::string& path);
// The largest |a − b|; Error(Format) when the lengths differ.
double maxAbsDelta(const std::vector<float>& a, const std::vector<float>& b);

} // namespace shardscope::report
