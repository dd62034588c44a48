#pragma once
// A small strict flag parser shared by shardscope-cli and shardscope-worker: every flag is
// declared, unknown flags and malformed values throw Error(InvalidArgument) with a one-line message
// naming the flag. A flag given twice is refused (never "first wins" or "last wins"); numbers are
// decimal only.
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

namespace shardscope {

class Args {
public:
    // valueFlags take a value (--ranks 4 or --ranks=4); switches take none (--json).
    Args(std::string command, std::set<std::string> valueFlags, std::set<std::string> switches);
    void parse(std::span<const std::string> argv);

    bool has(const std::string& flag) const;
    std::optional<std::string> value(const std::string& flag) const;
    std::string required(const std::string& flag) const;

    // Integers in [min, max]; accepts plain digits only.
    std::int64_t integer(const std::string& flag, std::int64_t min, std::int64_t max) const;
    // Counts like 7.5e9, 7500000000, 1.3B, 124M, 20K; finite, ≥ 1, ≤ 2^53 (exact in a double).
    std::uint64_t count(const std::string& flag) const;
    // Byte sizes like 25MiB, 1GB, 4096; finite, ≥ 0.
    std::uint64_t bytes(const std::string& flag) const;
    double real(const std::string& flag, double min, double max) const;

private:
    std::string command_;
    std::set<std::string> valueFlags_;
    std::set<std::string> switches_;
    std::map<std::string, std::string> values_;
};

// Parses "1.3B"/"124M"/"7.5e9" (count) — throws with `what` in the message on failure.
std::uint64_t parseCount(const std::string& text, const std::string& what);
std::uint64_t parseBytes(const std::string& text, const std::string& what);

} // namespace shardscope
