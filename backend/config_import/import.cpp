#include "config_import/import.h"

#include "core/error.h"
#include "core/user_files.h"
#include "plan/strategy.h"
#include "runconfig/fields.h"

#include <algorithm>
#include <unistd.h>

namespace shardscope::config_import {

Imported finish(const Parsed& parsed, const Context& context, const std::string& source) {
    const std::size_t keys = parsed.settings.size() + parsed.ignored.size();
    if (keys > kMaxConfigKeys)
        throwInvalid(source + ": has " + std::to_string(keys) +
                     " keys; ShardScope reads configurations of at most " +
                     std::to_string(kMaxConfigKeys));
    Imported out;
    // The run's strategy: the command line's, else the file's, else the caller's. A setting that
    // strategy does not read (runconfig's field table) sets nothing and is listed as ignored.
    std::string strategy = context.strategy;
    for (const Setting& s : parsed.settings)
        if (s.flag == "--strategy") {
            strategy = s.value;
            break;
        }
    if (const auto it = context.given.find("--strategy"); it != context.given.end())
        strategy = it->second;
    const std::optional<plan::Strategy> runStrategy = plan::parseStrategy(strategy);
    for (const Setting& s : parsed.settings) {
        const auto alias = context.aliases.find(s.flag);
        const std::string flag = alias == context.aliases.end() ? s.flag : alias->second;
        if (context.given.count(flag)) {
            out.ignored.push_back({s.key, "overridden by " + flag + " on the command line"});
            continue;
        }
        if (const std::optional<runconfig::Field> field = runconfig::fieldOfFlag(flag);
            field && runStrategy && !runconfig::appliesToStrategy(*field, *runStrategy)) {
            out.ignored.push_back({s.key, "sets " + flag + ", which " +
                                              std::string(plan::strategyName(*runStrategy)) +
                                              " does not read"});
            continue;
        }
        if (!context.accepted.count(flag)) {
            const auto why = context.unsupported.find(s.flag);
            out.ignored.push_back(
                {s.key, why != context.unsupported.end()
                            ? why->second
                            : "sets " + flag + ", which " + context.command + " does not use"});
            continue;
        }
        // Two keys may map onto one flag (DeepSpeed's reader emits one of them; Accelerate's
        // own fields and its DeepSpeed file may both name the strategy): the first one wins.
        const bool taken = std::any_of(out.args.begin(), out.args.end(),
                                       [&](const std::string& a) { return a == flag; });
        if (taken) {
            out.ignored.push_back({s.key, flag + " is already set by an earlier key"});
            continue;
        }
        out.args.push_back(flag);
        if (!s.value.empty()) out.args.push_back(s.value);
        std::string setting = s.value.empty() ? flag : flag + " " + s.value;
        if (!s.note.empty()) setting += " (" + s.note + ")";
        out.applied.push_back({s.key, setting});
    }
    out.ignored.insert(out.ignored.end(), parsed.ignored.begin(), parsed.ignored.end());
    return out;
}

std::string readConfigFile(const std::string& path, const std::string& flag) {
    const auto [fd, size] = openInputFile(path, flag, 0, kMaxConfigBytes);
    if (size == 0) {
        ::close(fd);
        throwInvalid(flag + ": " + path + " is empty");
    }
    std::string text(size, '\0');
    std::size_t got = 0;
    while (got < text.size()) {
        const ssize_t n = ::read(fd, text.data() + got, text.size() - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            const int err = errno;
            ::close(fd);
            throw Error(ErrorKind::Io,
                        flag + " " + path + ": " +
                            (n == 0 ? "the file shrank while being read" : ioErrorText(err)));
        }
        got += static_cast<std::size_t>(n);
    }
    ::close(fd);
    return text;
}

std::string shownJson(const nlohmann::json& v) {
    if (v.is_structured())
        for (const auto& element : v)
            if (element.is_structured()) return v.is_array() ? "(a list)" : "(an object)";
    std::string s = v.dump();
    if (s.size() > 60) s = s.substr(0, 57) + "...";
    return s;
}

std::map<std::string, std::string> givenFlags(const std::vector<std::string>& argv,
                                              const std::set<std::string>& switches) {
    std::map<std::string, std::string> out;
    for (std::size_t i = 0; i < argv.size(); ++i) {
        const std::string& a = argv[i];
        if (a.rfind("--", 0) != 0) continue;
        if (const auto eq = a.find('='); eq != std::string::npos) {
            out[a.substr(0, eq)] = a.substr(eq + 1);
        } else if (switches.count(a) || i + 1 >= argv.size()) {
            out[a] = "";
        } else {
            out[a] = argv[++i];
        }
    }
    return out;
}

std::vector<std::string> describe(const Imported& imported) {
    std::vector<std::string> lines;
    for (const Applied& a : imported.applied)
        lines.push_back("applied: " + a.key + " → " + a.setting);
    for (const Ignored& i : imported.ignored)
        lines.push_back("ignored: " + i.key + " — " + i.why);
    return lines;
}

std::string utf8Text(const std::string& text) {
    const std::string quoted =
        nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    return nlohmann::json::parse(quoted).get<std::string>();
}

nlohmann::json toJson(const Imported& imported, const std::string& source) {
    nlohmann::json applied = nlohmann::json::array(), ignored = nlohmann::json::array();
    for (const Applied& a : imported.applied)
        applied.push_back({{"key", a.key}, {"setting", a.setting}});
    for (const Ignored& i : imported.ignored)
        ignored.push_back({{"key", i.key}, {"why", i.why}});
    return {{"source", utf8Text(source)}, {"applied", applied}, {"ignored", ignored}};
}

} // namespace shardscope::config_import
