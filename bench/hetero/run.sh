#!/bin/sh
# Regenerates the README's tables of heterogeneous GPU assignment: the bundled group
# workload (bench/hetero/groups.csv) under hetero, static-order and data-parallel on a
# 4 V100 + 4 P100 + 4 K80 cluster, and (when the shared data is there) one Gavel trace
# under gavel, las and fifo on Gavel's simulated cluster (36 V100 + 36 P100 + 36 K80),
# also at 3, 6 and 9 times its offered load (submit times divided by F).
# Usage: bench/hetero/run.sh [BUILD_DIR] [OUT_DIR]   (defaults: build, out/hetero)
set -eu
BIN=${1:-build}/clustersim
OUT=${2:-out/hetero}
HERE=$(dirname "$0")
CLUSTER=2xV100M16:2,2xP100:2,2xK80:2
mkdir -p "$OUT"
for p in hetero static-order data-parallel; do
    "$BIN" run --trace "$HERE/groups.csv" --cluster "$CLUSTER" --policy "$p" --quiet \
        --policy-opt groups="$OUT/groups-$p.csv" --policy-opt trail="$OUT/trail-$p.csv" \
        --out "$OUT/run-$p" 2>>"$OUT/runs.log"
done
"$BIN" compare --trace "$HERE/groups.csv" --cluster "$CLUSTER" \
    --policies hetero,static-order,data-parallel --out "$OUT/compare" >/dev/null 2>>"$OUT/runs.log"
echo "| policy | makespan of all groups (s) | mean group span (s) | mean gap to the optimum | strong-GPU idle (GPU-s) |"
echo "| --- | ---: | ---: | ---: | ---: |"
for p in hetero static-order data-parallel; do
    awk -F, -v p="$p" 'NR > 1 {
            if (first == "" || $5 < first) first = $5
            if ($7 > last) last = $7
            span += $8; gap += $11; idle += $15; n++
        }
        END { printf "| `%s` | %.1f | %.1f | %+.1f %% | %.0f |\n", p, last - first, span / n,
              100 * gap / n, idle }' "$OUT/groups-$p.csv"
done
echo
echo "| group | jobs | preemptive bound (s) | optimum (s) | hetero (s) | static-order (s) | data-parallel (s) |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"
awk -F, 'FNR == 1 { f++; next }
    { if (f == 1) { order[++n] = $1; jobs[$1] = $3; opt[$1] = $10; lb[$1] = $16 }
      span[f, $1] = $8 }
    END { for (i = 1; i <= n; i++) { g = order[i]
          printf "| %s | %d | %.1f | %.1f | %.1f | %.1f | %.1f |\n", g, jobs[g], lb[g], opt[g],
                 span[1, g], span[2, g], span[3, g] } }' \
    "$OUT/groups-hetero.csv" "$OUT/groups-static-order.csv" "$OUT/groups-data-parallel.csv"
echo
# The engine's group figures (summary.json's job_groups), as compare's report shows them.
sed -n '/^| metric/,/^$/p' "$OUT/compare/report.md" | grep -E '^\| (metric|---|makespan|job groups|group completion)'
TRACE=${SIM_SHARED_DIR:-$HERE/../../../shared}/data/gavel/traces/msr_seed0/11cb48.trace.gz
if [ -f "$TRACE" ]; then
    "$BIN" compare --format gavel --trace "$TRACE" --cluster 9xV100M16:4,9xP100:4,9xK80:4 \
        --policies gavel,las,fifo --out "$OUT/gavel-compare" >/dev/null 2>>"$OUT/runs.log"
    echo
    sed -n '/^| metric/,/^$/p' "$OUT/gavel-compare/report.md"
    # Load sweep: the same jobs with their submit times divided by F (the offered load
    # times F), as Gavel's Figures 8 and 9 sweep the arrival rate.
    "$BIN" trace convert --format gavel --trace "$TRACE" --out "$OUT/gavel-native.csv" 2>>"$OUT/runs.log"
    echo
    echo "| submit times / F | offered load | JCT mean gavel (h) | las (h) | fifo (h) | wait mean gavel (h) | las (h) | fifo (h) |"
    echo "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    for F in 1 3 6 9; do
        awk -F, -v f="$F" 'BEGIN { OFS = "," } NR == 1 { print; next } { $2 = sprintf("%.6f", $2 / f); print }' \
            "$OUT/gavel-native.csv" >"$OUT/gavel-x$F.csv"
        "$BIN" compare --trace "$OUT/gavel-x$F.csv" --cluster 9xV100M16:4,9xP100:4,9xK80:4 \
            --policies gavel,las,fifo --no-figures --out "$OUT/gavel-x$F" >/dev/null 2>>"$OUT/runs.log"
        load=$(sed -n 's/.*GPU-hours of work, \([0-9.]*\) %.*/\1/p' "$OUT/gavel-x$F/report.md")
        row="| $F | $load % |"
        for k in jct_s wait_s; do
            for p in gavel las fifo; do
                v=$(grep -o "\"$k\": {[^}]*}" "$OUT/gavel-x$F/runs/$p/summary.json" |
                    sed 's/.*"mean": \([0-9.]*\).*/\1/')
                row="$row $(awk -v v="$v" 'BEGIN { printf "%.2f", v / 3600 }') |"
            done
        done
        echo "$row"
    done
fi
