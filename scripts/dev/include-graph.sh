#!/usr/bin/env bash
# include-graph.sh - the include graph of src/ between folders: every
# `#include "dir/..."` of a file in one folder naming a header of another.
# A folder is src/<dir>, except src/levels/<level> (one folder a level) and
# src/compat/<layer>. Prints each edge (from -> to, with the files that make
# it: -v), then the circles: pairs of folders that include each other, and
# any longer loop tsort finds. Exit 1 if there is a circle.
#   scripts/dev/include-graph.sh [-v]
set -euo pipefail
cd "$(dirname "$0")/../.."
verbose=0
[ "${1:-}" = -v ] && verbose=1

folder() { # path under src/ (or an include like levels/pfs/pfs.h) -> folder
    local p=${1#src/}
    case $p in
        levels/*/*|compat/*/*) echo "${p%%/*}/$(echo "$p" | cut -d/ -f2)" ;;
        */*) echo "${p%%/*}" ;;
        *) echo "" ;;
    esac
}

edges=$(mktemp)
trap 'rm -f "$edges"' EXIT
while IFS= read -r f; do
    from=$(folder "$f")
    sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\/[^"]*\)".*/\1/p' "$f" |
    while IFS= read -r inc; do
        [ -e "src/$inc" ] || continue
        to=$(folder "$inc")
        if [ -n "$to" ] && [ "$to" != "$from" ]; then printf '%s %s %s\n' "$from" "$to" "$f -> $inc"; fi
    done
done < <(find src -name '*.[ch]' | sort) > "$edges"

echo "# folder -> folder (files)"
awk '{print $1" -> "$2}' "$edges" | sort | uniq -c | awk '{printf "%-18s -> %-18s %3d\n", $2, $4, $1}'
if [ "$verbose" = 1 ]; then
    echo "# every cross-folder include"
    cut -d' ' -f3- "$edges" | sort
fi

status=0
echo "# circles between two folders"
pairs=$(awk '{print $1" "$2}' "$edges" | sort -u)
while read -r a b; do
    if grep -qx "$b $a" <<< "$pairs" && [[ "$a" < "$b" ]]; then
        echo "$a <-> $b: $(awk -v a="$a" -v b="$b" '$1==a && $2==b' "$edges" | wc -l) files one way, $(awk -v a="$a" -v b="$b" '$1==b && $2==a' "$edges" | wc -l) the other"
        status=1
    fi
done <<< "$pairs"
echo "# longer loops (tsort)"
if ! tsort <<< "$pairs" > /dev/null 2> >(sed 's/^tsort: //' >&2); then status=1; fi
exit $status
