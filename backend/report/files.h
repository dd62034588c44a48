#pragma once
// The files a run leaves besides its recording: reports written atomically, and the final fp32
// weights (--weights-out) that `compare` reads back to measure |Δ| against DDP.
#include <string>
#include <vector>

namespace shardscope::report {

// An OutputFile (core/user_files.h): written beside and renamed into place, never over a special
// file. Throws Error naming `flag`. Returns where the file went (OutputFile::commit).
std::string writeTextFile(const std::string& path, const std::string& text,
                          const std::string& flag);
// Every unit's unpadded fp32 weights, little-endian, unit order, written atomically.
std::string writeWeightsFile(const std::string& path,
                             const std::vector<std::vector<float>>& weights);
// A --weights-out file back (all units concatenated); throws Error(Io) / Error(Format) when
// unreadable or not a whole number of floats.
std::vector<float> readWeightsFile(const std::string& path);
// The largest |a − b|; Error(Format) when the lengths differ.
double maxAbsDelta(const std::vector<float>& a, const std::vector<float>& b);

} // namespace shardscope::report
