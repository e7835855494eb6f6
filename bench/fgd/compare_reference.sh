#!/bin/sh
# Every openb pod list of a study (bench/fgd/study.sh's OUT) against the reference
# simulator's published results: its experiments/analysis/expected_results/
# analysis_allo_discrete.csv (hkust-adsl/kubernetes-scheduler-simulator; give its path),
# allocated GPUs (%) at 130 % demand, seed means. Prints a markdown table, one row per
# pod list the reference published, "reference / clustersim" per policy, then per
# policy the largest difference and how many lists are within 0.5 point, and on how
# many lists the six policies come in the same order.
#
# usage: bench/fgd/compare_reference.sh STUDY_OUT REFERENCE_CSV
set -eu
study=$1
ref=$2

for d in "$study"/*/; do
    [ -f "$d/pack.csv" ] || continue
    awk -F, -v t="$(basename "$d")" 'NR > 1 && $2 == 130 { print "O", t, $1, $4 }' "$d/pack.csv"
done > "$study/.ours.txt"

awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "130") c = i; next }
         { w = $1; sub(/^openb_pod_list_/, "", w); print "R", w, $2, $c }' "$ref" |
    cat - "$study/.ours.txt" | awk '
    BEGIN {
        split("random dotprod gpuclustering gpupacking bestfit fgd", pol, " ")
        name["01-Random"] = "random"; name["02-DotProd"] = "dotprod"
        name["03-GpuClustering"] = "gpuclustering"; name["04-GpuPacking"] = "gpupacking"
        name["05-BestFit"] = "bestfit"; name["06-FGD"] = "fgd"
    }
    $1 == "R" && ($3 in name) { k = $2 SUBSEP name[$3]; rs[k] += $4; rn[k]++; lists[$2] = 1 }
    $1 == "O" { o[$2 SUBSEP $3] = $4 }
    END {
        printf "| pod list |"; for (i = 1; i <= 6; i++) printf " %s |", pol[i]; print ""
        printf "| --- |"; for (i = 1; i <= 6; i++) printf " --- |"; print ""
        n = 0; for (t in lists) ts[++n] = t
        for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (ts[j] < ts[i]) { x = ts[i]; ts[i] = ts[j]; ts[j] = x }
        same = 0; m = 0
        for (i = 1; i <= n; i++) {
            t = ts[i]
            if (!((t SUBSEP "fgd") in o)) continue
            m++
            printf "| %s |", t
            for (p = 1; p <= 6; p++) {
                k = t SUBSEP pol[p]; r[p] = rs[k] / rn[k]; c[p] = o[k]; d = c[p] - r[p]
                printf " %.2f / %.2f |", r[p], c[p]
                if (d < 0) d = -d
                if (d > worst[p]) worst[p] = d
                if (d <= 0.5) near[p]++
            }
            print ""
            ok = 1
            for (p = 1; p <= 6; p++) for (q = 1; q <= 6; q++)
                if ((r[p] < r[q]) != (c[p] < c[q])) ok = 0
            same += ok
        }
        print ""
        for (p = 1; p <= 6; p++)
            printf "%s: largest difference %.2f point, within 0.5 point on %d of %d lists\n", pol[p], worst[p], near[p], m
        printf "the same order of the six policies on %d of %d lists\n", same, m
    }'
rm -f "$study/.ours.txt"
