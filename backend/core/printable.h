#pragma once
// Text from a file, the wire or a user, made safe to print on one line: whole UTF-8 characters
// pass, control characters become \n, \t, \r or \xNN, and each byte of a broken UTF-8 sequence
// becomes \xNN — so an embedded NUL no longer cuts a message short and a terminal never receives
// raw invalid bytes. At most `maxChars` characters, then "…".
#include <cstddef>
#include <string>
#include <string_view>

namespace shardscope {

std::string printableText(std::string_view text, std::size_t maxChars = 2000);

} // namespace shardscope
