#!/bin/sh
# The FGD study's default-list table against the reference simulator
# (hkust-adsl/kubernetes-scheduler-simulator): `clustersim pack` on
# openb_pod_list_default.csv and the 6,212-GPU openb node list, 130 % demand, seeds
# 42..51, the six policies of the paper's figure, once with the reference simulator's
# scores (--policy-opt score=reference) and once with clustersim's own. Prints a
# markdown table (also written to OUT/reference.md): allocated GPUs (%) at 130 %
# demand, mean over the seeds, beside the reference's published seed means, then
# whether every policy is within 0.5 point of it and in the same order.
#
# The published means are those of the reference's
# experiments/analysis/expected_results/analysis_allo_discrete.csv (workload
# openb_pod_list_default, column 130, seeds 42..51), averaged here once.
#
# usage: bench/fgd/reference.sh [CLUSTERSIM] [OUT] [DATA]
#   CLUSTERSIM  default ./build/clustersim
#   OUT         default reference-out
#   DATA        default ../shared/data/alibaba_gpu_v2023
set -eu
bin=${1:-./build/clustersim}
out=${2:-reference-out}
data=${3:-../shared/data/alibaba_gpu_v2023}
pols=random,dotprod,gpuclustering,gpupacking,bestfit,fgd
mkdir -p "$out/reference" "$out/clustersim"

for mode in reference clustersim; do
    "$bin" pack --format alibaba2023 --trace "$data/openb_pod_list_default.csv" \
        --cluster "$data/openb_node_list_gpu_node.csv" --policies "$pols" \
        --policy-opt score=$mode --seeds 42..51 --jobs 2 --out "$out/$mode" \
        > "$out/$mode.txt" 2>&1
done

# policy, published seed mean (analysis_allo_discrete.csv), in the published order.
published='random 87.470
dotprod 90.849
gpuclustering 91.878
gpupacking 92.002
bestfit 93.076
fgd 95.391'

echo "$published" | awk -v a="$out/reference/pack.csv" -v b="$out/clustersim/pack.csv" '
    BEGIN {
        FS = ","
        while ((getline l < a) > 0) { split(l, f, ","); if (f[2] == 130) { r[f[1]] = f[4]; rs[f[1]] = f[5] } }
        while ((getline l < b) > 0) { split(l, f, ","); if (f[2] == 130) { o[f[1]] = f[4]; os[f[1]] = f[5] } }
        FS = " "
        print "Allocated GPUs (%) at 130 % demand, openb default pod list, mean (sd) over seeds 42..51."
        print ""
        print "| policy | reference simulator (published) | clustersim, score=reference | difference | clustersim, own score | difference |"
        print "| --- | --- | --- | --- | --- | --- |"
    }
    {
        p[++n] = $1; pub[n] = $2
        d = r[$1] - $2; e = o[$1] - $2
        printf "| %s | %.2f | %.2f (%.2f) | %+.2f | %.2f (%.2f) | %+.2f |\n", $1, $2, r[$1], rs[$1], d, o[$1], os[$1], e
        if (d < -0.5 || d > 0.5) { far = far " " $1 }
    }
    END {
        order = 1
        for (i = 2; i <= n; i++) if (r[p[i]] <= r[p[i - 1]]) order = 0
        print ""
        print "score=reference: " (far == "" ? "every policy within 0.5 point" : "more than 0.5 point off:" far) \
              "; order " (order ? "the same as published" : "differs from the published one") "."
    }' | tee "$out/reference.md"
