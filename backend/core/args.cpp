#include "core/args.h"

#include "core/error.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>

namespace shardscope {

Args::Args(std::string command, std::set<std::string> valueFlags, std::set<std::string> switches)
    : command_(std::move(command)), valueFlags_(std::move(valueFlags)),
      switches_(std::move(switches)) {}

void Args::parse(std::span<const std::string> argv) {
    for (std::size_t i = 0; i < argv.size(); ++i) {
        std::string arg = argv[i];
        if (arg.rfind("--", 0) != 0) throwInvalid("unexpected argument '" + arg + "'");
        std::optional<std::string> inlineValue;
        if (auto eq = arg.find('='); eq != std::string::npos) {
            inlineValue = arg.substr(eq + 1);
            arg = arg.substr(0, eq);
        }
        // One value per flag: "--steps 5 --steps 50" is a typo or a script bug, and either
        // reading of it (first wins, last wins) would run something the user did not check.
        if ((switches_.count(arg) || valueFlags_.count(arg)) && values_.count(arg))
            throwInvalid(arg + " is given twice; give it once");
        if (switches_.count(arg)) {
            if (inlineValue) throwInvalid(arg + " takes no value");
            values_[arg] = "";
        } else if (valueFlags_.count(arg)) {
            if (inlineValue) {
                values_[arg] = *inlineValue;
            } else {
                if (i + 1 >= argv.size()) throwInvalid(arg + " needs a value");
                values_[arg] = argv[++i];
            }
        } else {
            throwInvalid("unknown flag '" + arg + "'");
        }
    }
}

bool Args::has(const std::string& flag) const {
    return values_.count(flag) != 0;
}

std::optional<std::string> Args::value(const std::string& flag) const {
    auto it = values_.find(flag);
    if (it == values_.end()) return std::nullopt;
    return it->second;
}

std::string Args::required(const std::string& flag) const {
    auto v = value(flag);
    if (!v) throwInvalid(flag + " is required");
    return *v;
}

std::int64_t Args::integer(const std::string& flag, std::int64_t min, std::int64_t max) const {
    const std::string text = required(flag);
    std::int64_t v = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec == std::errc::result_out_of_range)
        throwInvalid(flag + " " + text + " is out of range (" + std::to_string(min) + "–" +
                     std::to_string(max) + ")");
    if (ec != std::errc() || end != text.data() + text.size())
        throwInvalid(flag + " expects an integer, got '" + text + "'");
    if (v < min || v > max)
        throwInvalid(flag + " must be between " + std::to_string(min) + " and " +
                     std::to_string(max) + ", got " + text);
    return v;
}

namespace {

// Splits "7.5B" into (7.5, 1e9). Returns false when the text is not a finite number + suffix.
bool splitNumber(const std::string& text, double& number, double& scale,
                 const std::vector<std::pair<std::string, double>>& suffixes) {
    if (text.empty()) return false;
    std::string digits = text;
    scale = 1.0;
    for (const auto& [suffix, factor] : suffixes) {
        if (digits.size() > suffix.size() &&
            digits.compare(digits.size() - suffix.size(), suffix.size(), suffix) == 0) {
            digits.resize(digits.size() - suffix.size());
            // "1.5 GB" as "1.5GB": one space between the number and its unit.
            if (!digits.empty() && digits.back() == ' ') digits.pop_back();
            scale = factor;
            break;
        }
    }
    if (digits.empty() ||
        !(std::isdigit(static_cast<unsigned char>(digits[0])) || digits[0] == '.'))
        return false;
    // Decimal only: strtod would also read hexadecimal ("0x10" as 16) and hex floats.
    for (const char ch : digits)
        if (!(std::isdigit(static_cast<unsigned char>(ch)) || ch == '.' || ch == 'e' || ch == 'E' ||
              ch == '+' || ch == '-'))
            return false;
    char* end = nullptr;
    number = std::strtod(digits.c_str(), &end);
    return end == digits.c_str() + digits.size() && std::isfinite(number);
}

std::uint64_t toCount(double number, double scale, const std::string& text, const std::string& what,
                      double min) {
    const double v = number * scale;
    constexpr double kMax = 9007199254740992.0; // 2^53: every integer below is exact in a double
    if (!std::isfinite(v) || v > kMax)
        throwInvalid(what + " " + text + " is too large (at most 2^53)");
    if (v < min)
        throwInvalid(what + " must be at least " + std::to_string(static_cast<int>(min)) +
                     ", got " + text);
    if (v != std::floor(v)) throwInvalid(what + " must be a whole number, got " + text);
    return static_cast<std::uint64_t>(v);
}

} // namespace

std::uint64_t parseCount(const std::string& text, const std::string& what) {
    double number = 0, scale = 1;
    // Order matters: longer suffixes first.
    if (!splitNumber(text, number, scale,
                     {{"T", 1e12}, {"B", 1e9}, {"G", 1e9}, {"M", 1e6}, {"K", 1e3}, {"k", 1e3}}))
        throwInvalid(what + " expects a finite number such as 7.5e9 or 1.3B, got '" + text + "'");
    return toCount(number, scale, text, what, 1.0);
}

std::uint64_t parseBytes(const std::string& text, const std::string& what) {
    double number = 0, scale = 1;
    if (!splitNumber(text, number, scale,
                     {{"TiB", 1099511627776.0},
                      {"GiB", 1073741824.0},
                      {"MiB", 1048576.0},
                      {"KiB", 1024.0},
                      {"TB", 1e12},
                      {"GB", 1e9},
                      {"MB", 1e6},
                      {"KB", 1e3},
                      {"kB", 1e3},
                      {"B", 1.0}}))
        throwInvalid(what + " expects a size such as 25MiB, 1GB or 4096, got '" + text + "'");
    return toCount(number, scale, text, what, 0.0);
}

std::uint64_t Args::count(const std::string& flag) const {
    return parseCount(required(flag), flag);
}

std::uint64_t Args::bytes(const std::string& flag) const {
    return parseBytes(required(flag), flag);
}

double Args::real(const std::string& flag, double min, double max) const {
    const std::string text = required(flag);
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    const bool decimal = text.find_first_not_of("0123456789.eE+-") == std::string::npos;
    if (text.empty() || !decimal || end != text.c_str() + text.size() || !std::isfinite(v))
        throwInvalid(flag + " expects a finite number, got '" + text + "'");
    if (v < min || v > max)
        throwInvalid(flag + " must be between " + std::to_string(min) + " and " +
                     std::to_string(max) + ", got " + text);
    return v;
}

} // namespace shardscope
