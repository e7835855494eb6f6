#!/bin/sh
# The Muri interleaving study of the README: each Muri trace (trace1..4, Philly-derived,
# 8 x 8 GPUs) under every study policy that this build has (srtf, srsf, las, gittins,
# themis, antman, sjf, fifo), las in mode=tiresias, and interleave in both orderings
# (Muri-S: ordering=srsf, Muri-L: ordering=las). One `clustersim run` per trace and
# policy; the table (average JCT, makespan and 99th-percentile JCT, in hours, and the
# run's time, beside the Muri simulator's published figures of bench/muri/published.csv
# where it has the policy) goes to OUT/table.md, each run's outputs to
# OUT/<trace>/<policy>/.
#
# usage: bench/muri/study.sh [CLUSTERSIM] [OUT] [DATA]
#   CLUSTERSIM  default ./build/clustersim
#   OUT         default muri-study
#   DATA        default ../shared/data/muri
set -eu
bin=${1:-./build/clustersim}
out=${2:-muri-study}
data=${3:-../shared/data/muri}
mkdir -p "$out"
have=$("$bin" policies | awk '{print $1}')
runs=""
for p in srtf srsf las gittins themis antman sjf fifo; do
    if echo "$have" | grep -qx "$p"; then runs="$runs $p"; fi
done
runs="$runs las:tiresias interleave:srsf interleave:las"
pub="$(dirname "$0")/published.csv"

# A figure of summary.json: the value of key in the object named obj (or top level).
field() { # file obj key
    if [ -n "$2" ]; then
        grep "\"$2\"" "$1" | head -n 1 | sed "s/.*\"$3\": \([-0-9.e+]*\).*/\1/"
    else
        grep "\"$3\"" "$1" | head -n 1 | sed "s/.*\"$3\": \([-0-9.e+]*\).*/\1/"
    fi
}

{
    echo "| trace | policy | avg JCT (h) | makespan (h) | p99 JCT (h) | run (s) | Muri sim.: avg JCT (h) | makespan (h) | p99 JCT (h) |"
    echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
} > "$out/table.md"
for t in trace1.csv trace2.csv.gz trace3.csv trace4.csv; do
    n=${t%%.*}
    mkdir -p "$out/$n"
    for r in $runs; do
        p=${r%%:*}
        opt=""
        label=$p
        case $r in
        interleave:*) opt="--policy-opt ordering=${r#*:}"; label="interleave (${r#*:})" ;;
        las:*) opt="--policy-opt mode=${r#*:}"; label="las (${r#*:})" ;;
        esac
        d="$out/$n/$(echo "$r" | tr ':' '-')"
        # shellcheck disable=SC2086
        "$bin" run --format muri --trace "$data/sim_trace_data/$t" --cluster "$data/n8g8.csv" \
            --policy "$p" $opt --out "$d" --quiet > "$d.log" 2>&1 || { echo "$n $r failed" >&2; continue; }
        s="$d/summary.json"
        secs=$(sed -n 's/.* in \([0-9.]*\) s .*/\1/p' "$d.log" | tail -n 1)
        # The Muri simulator's figures for the same trace and policy, where published.
        ref=$(awk -F, -v t="$n" -v p="$label" '$1 == t && $2 == p { print $3 " | " $4 " | " $5 }' "$pub")
        awk -v t="$n" -v p="$label" -v a="$(field "$s" jct_s mean)" -v m="$(field "$s" "" makespan_s)" \
            -v q="$(field "$s" jct_s p99)" -v s="${secs:-?}" -v r="${ref:-| |}" \
            'BEGIN { printf "| %s | %s | %.1f | %.1f | %.1f | %s | %s |\n", t, p, a / 3600, m / 3600, q / 3600, s, r }' \
            >> "$out/table.md"
    done
done
cat "$out/table.md"
