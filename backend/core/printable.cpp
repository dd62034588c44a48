#include "core/printable.h"

namespace shardscope {

std::string printableText(std::string_view text, std::size_t maxChars) {
    static constexpr char kHex[] = "0123456789abcdef";
    std::string out;
    std::size_t chars = 0;
    for (std::size_t i = 0; i < text.size(); ++chars) {
        if (chars == maxChars) {
            out += "…";
            break;
        }
        const auto c = static_cast<unsigned char>(text[i]);
        // A whole UTF-8 sequence passes as one character; a broken one is escaped byte by byte.
        const std::size_t len = c < 0x80           ? 1
                                : (c >> 5) == 0x6  ? 2
                                : (c >> 4) == 0xe  ? 3
                                : (c >> 3) == 0x1e ? 4
                                                   : 0;
        bool valid = len > 0 && i + len <= text.size();
        for (std::size_t k = 1; valid && k < len; ++k)
            valid = (static_cast<unsigned char>(text[i + k]) & 0xc0) == 0x80;
        if (valid && len > 1) {
            out.append(text.substr(i, len));
            i += len;
        } else if (valid && c >= 0x20 && c != 0x7f) {
            out += static_cast<char>(c);
            ++i;
        } else {
            if (c == '\n')
                out += "\\n";
            else if (c == '\t')
                out += "\\t";
            else if (c == '\r')
                out += "\\r";
            else
                out += std::string("\\x") + kHex[c >> 4] + kHex[c & 0xf];
            ++i;
        }
    }
    return out;
}

} // namespace shardscope
