#!/bin/sh
# The fragmentation study of the README: `clustersim pack` on the openb default trace and
# every variant in pod_lists_gz/, all seven packing policies, 10 seeds, 130 % demand,
# against the 6,212-GPU openb node list, with the reference simulator's scores
# (--policy-opt score=reference: dotprod, bestfit, gpupacking, gpuclustering, fgd; SCORE=
# clustersim in the environment for clustersim's own). Writes one pack.csv and pack.png
# per trace under OUT/<trace>/ and the table of allocation at 130 % (mean ± sd) to
# OUT/table.md.
#
# usage: bench/fgd/study.sh [CLUSTERSIM] [OUT] [DATA]
#   CLUSTERSIM  default ./build/clustersim
#   OUT         default study-out
#   DATA        default ../shared/data/alibaba_gpu_v2023
set -eu
bin=${1:-./build/clustersim}
out=${2:-study-out}
data=${3:-../shared/data/alibaba_gpu_v2023}
score=${SCORE:-reference}
mkdir -p "$out"

start=$(date +%s)
for t in "$data/openb_pod_list_default.csv" "$data"/pod_lists_gz/*.csv.gz; do
    n=$(basename "$t" | sed 's/^openb_pod_list_//; s/\.csv\.gz$//; s/\.csv$//')
    "$bin" pack --format alibaba2023 --trace "$t" \
        --cluster "$data/openb_node_list_gpu_node.csv" \
        --policy-opt score="$score" --seeds 42..51 --jobs 2 --out "$out/$n" \
        > "$out/$n.txt" 2>&1
done
end=$(date +%s)

# One row per trace, one column per policy (in pack.csv's order): alloc_mean ± alloc_sd
# at 130 % demand, then how many fewer GPUs fgd leaves unallocated than the best other.
{
    echo "Allocated GPUs (%) at 130 % demand, mean ± sd over seeds 42..51, score=$score; whole study $((end - start)) s."
    echo
    first=1
    for d in "$out"/*/; do
        awk -F, -v n="$(basename "$d")" -v first=$first '
            NR > 1 && $2 == 130 { p[++k] = $1; m[k] = $4; s[k] = $5 }
            END {
                if (first) {
                    h = "| trace"; u = "| ---"
                    for (i = 1; i <= k; i++) { h = h " | " p[i]; u = u " | ---" }
                    print h " | fgd: fewer unallocated GPUs than the best other |"
                    print u " | --- |"
                }
                best = -1; f = -1
                for (i = 1; i <= k; i++)
                    if (p[i] == "fgd") f = m[i]; else if (m[i] > best) best = m[i]
                r = "| " n
                for (i = 1; i <= k; i++) r = r sprintf(" | %.1f ± %.1f", m[i], s[i])
                g = (f >= 0 && best < 100) ? 100 * (1 - (100 - f) / (100 - best)) : 0
                gain = g > -0.5 && g < 0.5 ? "0 %" : sprintf("%.0f %%", g)
                print r " | " gain " |"
            }' "$d/pack.csv"
        first=0
    done
} > "$out/table.md"
cat "$out/table.md"
