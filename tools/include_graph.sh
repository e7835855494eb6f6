#!/bin/sh
# include_graph.sh [ROOT]: the include graph between the source folders, from the
# `#include "folder/file.h"` lines of every .c and .h file: one line per edge
# "from -> to (N includes)", then each folder's line count (wc -l of its .c and .h).
# Run from anywhere; ROOT defaults to the repository this script is in.
set -eu
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root"
folders="base sim traces models policies study cli bench tests"
echo "include graph (from -> to: #include lines):"
for f in $folders; do
    [ -d "$f" ] || continue
    find "$f" \( -name '*.c' -o -name '*.h' -o -name '*.cu' \) -print |
        xargs grep -h '^#include "[a-z_]*/' 2>/dev/null |
        sed 's/^#include "\([a-z_]*\)\/.*/\1/' | sort | uniq -c |
        while read -r n to; do
            [ "$to" = "$f" ] || printf '  %-9s -> %-9s %4d\n' "$f" "$to" "$n"
        done
done
echo "lines per folder (.c and .h):"
for f in $folders; do
    [ -d "$f" ] || continue
    n=$(find "$f" \( -name '*.c' -o -name '*.h' \) -print | xargs cat 2>/dev/null | wc -l)
    printf '  %-9s %6d\n' "$f" "$n"
done
