#pragma once
// The parser callback for JSON a user hands over (checkpoint metadata, DeepSpeed and Hugging
// Face configs): a key given twice in one object is refused, as duplicate YAML keys are (JSON
// parsers disagree on which of the two wins, so such a file means different things to different
// tools), and nesting is bounded. Header-only: its users already link nlohmann_json.
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace shardscope {

// Thrown from the parse; what() is the reason without the file's name.
struct JsonRefused : std::runtime_error {
    using std::runtime_error::runtime_error;
};

class StrictJson {
public:
    explicit StrictJson(int maxDepth = 0) : maxDepth_(maxDepth) {}
    bool operator()(int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
        using Event = nlohmann::json::parse_event_t;
        if (maxDepth_ > 0 && depth > maxDepth_)
            throw JsonRefused("nested deeper than " + std::to_string(maxDepth_));
        switch (event) {
        case Event::object_start:
            objects_.push_back({});
            break;
        case Event::object_end:
            if (!objects_.empty()) objects_.pop_back();
            break;
        case Event::key: {
            if (objects_.empty() || !parsed.is_string()) break;
            Object& o = objects_.back();
            o.last = parsed.get<std::string>();
            if (!o.seen.insert(o.last).second)
                throw JsonRefused("key \"" + path() + "\" is given twice");
            break;
        }
        default:
            break;
        }
        return true;
    }

private:
    struct Object {
        std::set<std::string> seen;
        std::string last; // the key being read
    };
    std::string path() const {
        std::string p;
        for (const Object& o : objects_) {
            if (!p.empty()) p += '.';
            p.append(o.last, 0, 64);
        }
        return p;
    }
    int maxDepth_;
    std::vector<Object> objects_;
};

} // namespace shardscope
