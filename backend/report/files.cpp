#include "report/files.h"

#include "core/error.h"
#include "core/user_files.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace shardscope::report {

std::string writeTextFile(const std::string& path, const std::string& text,
                          const std::string& flag) {
    OutputFile out(path, flag);
    out.write(text);
    return out.commit();
}

std::string writeWeightsFile(const std::string& path,
                             const std::vector<std::vector<float>>& weights) {
    static_assert(std::endian::native == std::endian::little, "weights files are little-endian");
    std::string bytes;
    for (const auto& unit : weights)
        bytes.append(reinterpret_cast<const char*>(unit.data()), unit.size() * sizeof(float));
    return writeTextFile(path, bytes, "--weights-out");
}

std::vector<float> readWeightsFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error(ErrorKind::Io, "cannot read weights file '" + path + "'");
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (bytes.size() % sizeof(float) != 0)
        throw Error(ErrorKind::Format,
                    "weights file '" + path + "' is not a whole number of fp32 values");
    std::vector<float> out(bytes.size() / sizeof(float));
    std::memcpy(out.data(), bytes.data(), bytes.size());
    return out;
}

double maxAbsDelta(const std::vector<float>& a, const std::vector<float>& b) {
    if (a.size() != b.size())
        throw Error(ErrorKind::Format, "weights of different sizes (" + std::to_string(a.size()) +
                                           " vs " + std::to_string(b.size()) + " values)");
    double worst = 0.0;
    for (std::size_t i = 0; i < a.size(); ++i)
        worst = std::max(worst, std::fabs(static_cast<double>(a[i]) - static_cast<double>(b[i])));
    return worst;
}

} // namespace shardscope::report
