#!/usr/bin/env bash
# The tree's C++ and CUDA sources are formatted as .clang-format says (third_party/ excepted).
# Usage: scripts/check-format.sh [CLANG_FORMAT]   (default clang-format-14; `make format` fixes)
# Prints the first differences and exits 1 when a file is not formatted.
set -euo pipefail
cd "$(dirname "$0")/.."
tool=${1:-clang-format-14}
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files -- '*.cpp' '*.h' '*.cu' '*.cuh' ':!:third_party/*')
else
  mapfile -t files < <(find app backend widgets tests -name '*.cpp' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh')
fi
if ! "$tool" --dry-run --Werror "${files[@]}" 2>"${TMPDIR:-/tmp}/shardscope-format.$$"; then
  head -n 40 "${TMPDIR:-/tmp}/shardscope-format.$$"
  echo "check-format: $(grep -c 'error:' "${TMPDIR:-/tmp}/shardscope-format.$$") places not formatted; run \`make format\`"
  rm -f "${TMPDIR:-/tmp}/shardscope-format.$$"
  exit 1
fi
rm -f "${TMPDIR:-/tmp}/shardscope-format.$$"
echo "check-format: ${#files[@]} files formatted"
