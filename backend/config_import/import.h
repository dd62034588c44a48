#pragma once
// Configurations people already have (DeepSpeed's ds_config.json, an Accelerate YAML), read
// into ShardScope's own flags: every key is either applied — as the flag it becomes, which the
// one parser (runconfig::parseRunConfig, or estimate's flags) then validates — or listed as
// ignored with the reason. Nothing is dropped silently. Flags on the command line override the
// file: a key whose flag was given is listed as ignored ("overridden by --flag").
//
// The readers turn keys into Settings (key path → flag and value); finish() decides, per
// command, which of them become flags: a flag the command does not take is ignored with the
// reason in Context::unsupported (or "not used by <command>").
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace shardscope::config_import {

// Largest configuration file read (a ds_config or an Accelerate YAML is a few KiB).
inline constexpr std::uint64_t kMaxConfigBytes = 1u << 20;
// Most keys listed from one file: the listing goes into the report's notes, which are bounded.
inline constexpr std::size_t kMaxConfigKeys = 200;

// One key path that maps onto a flag.
struct Setting {
    std::string key;   // "zero_optimization.stage"
    std::string flag;  // "--strategy"
    std::string value; // "zero3"; empty for a switch
    std::string note;  // how it was derived ("auto: hidden² = 589824"), may be empty
};

struct Ignored {
    std::string key;
    std::string why;
    bool operator==(const Ignored&) const = default;
};

struct Applied {
    std::string key;
    std::string setting; // "--strategy zero3", with the derivation in parentheses when there is one
    bool operator==(const Applied&) const = default;
};

// What a command needs to resolve "auto" values, check the batch and pick its flags.
struct Context {
    std::string command;                            // "run", "compare", "estimate"
    int worldSize = 1;                              // data-parallel ranks (--ranks)
    std::int64_t hiddenSize = 0;                    // the model's d_model; 0: unknown
    std::uint64_t blockParams = 0;                  // parameters of one decoder block; 0: unknown
    std::int64_t defaultMicroBatch = 1;             // the preset's micro-batch
    double defaultLearningRate = 1e-3;              // the preset's learning rate
    std::map<std::string, std::string> given;       // flags on the command line (value, or "")
    std::set<std::string> accepted;                 // flags this command takes
    std::map<std::string, std::string> unsupported; // flag → why a key mapping to it is ignored
    std::map<std::string, std::string> aliases;     // flag → this command's spelling of it
    // The strategy of the run when neither the file nor the command line names one (the GUI's
    // run settings); empty: unknown (compare runs several).
    std::string strategy;
};

// A reader's result before finish(): settings and keys already known to be ignored.
struct Parsed {
    std::vector<Setting> settings;
    std::vector<Ignored> ignored;
};

struct Imported {
    std::vector<std::string> args; // flags to append to the command line's
    std::vector<Applied> applied;
    std::vector<Ignored> ignored;
    bool operator==(const Imported&) const = default;
};

// Settings → flags for this command (see the header comment). Error(InvalidArgument) naming
// `source` when the file has more than kMaxConfigKeys keys.
Imported finish(const Parsed& parsed, const Context& context,
                const std::string& source = "the configuration");

// The text of a configuration file (a regular file of at most kMaxConfigBytes). Error(Io) /
// Error(InvalidArgument) naming `flag`.
std::string readConfigFile(const std::string& path, const std::string& flag);

// A JSON value as a message shows it: strings quoted, long ones cut. A list or object that nests
// another is named, not printed (dump() recurses once per level of a hostile file's nesting).
std::string shownJson(const nlohmann::json& v);

// The flags given on a command line: "--x v", "--x=v" and switches (value "").
std::map<std::string, std::string> givenFlags(const std::vector<std::string>& argv,
                                              const std::set<std::string>& switches);

// The listing printed by the CLI and shown by the GUI: "applied: key → setting",
// "ignored: key — why".
std::vector<std::string> describe(const Imported& imported);
// `text` as valid UTF-8 (a broken byte becomes U+FFFD): what a JSON report may carry of a path,
// whose bytes are the file system's, not necessarily UTF-8.
std::string utf8Text(const std::string& text);
// {"source": file, "applied": [{key, setting}], "ignored": [{key, why}]} (the report's
// config_import; the source as utf8Text).
nlohmann::json toJson(const Imported& imported, const std::string& source);

} // namespace shardscope::config_import
