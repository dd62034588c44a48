#!/usr/bin/env python3
"""Inline a multi-header nlohmann/json tree into one json.hpp (what upstream's single_include is).

Debian's nlohmann-json3-dev installs the multi-header tree; this turns it into the single header
kept here. Every `#include <nlohmann/…>` line is replaced by that file's text the first time it
is seen and by a comment afterwards (every header has an include guard, so later inclusions were
no-ops). Nothing else is changed.

    third_party/nlohmann_json/amalgamate.py /usr/include > third_party/nlohmann_json/include/nlohmann/json.hpp
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*<(nlohmann/[^>]+)>')


def inline(root, rel, seen, out):
    seen.add(rel)
    with open(os.path.join(root, rel), encoding="utf-8") as f:
        for line in f:
            m = INCLUDE.match(line)
            if not m:
                out.append(line)
                continue
            out.append("// " + line.lstrip())
            if m.group(1) not in seen:
                inline(root, m.group(1), seen, out)


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "/usr/include"
    out = []
    inline(root, "nlohmann/json.hpp", set(), out)
    sys.stdout.write("".join(out))


if __name__ == "__main__":
    main()
