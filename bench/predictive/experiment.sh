#!/bin/sh
# experiment.sh: predicted-demand placement (`predictive`) against `binpack` and `fgd`
# on three workloads, every job's truth (per-GPU-type demand and speed) coming from the
# model zoo (clustersim run --zoo), so prediction errors have their real consequences.
#   gen        3,000 synthetic jobs (clustersim trace gen --zoo, seed 11, 60 jobs/h, 40 %
#              LS), users over-asking by a factor 1 + Exp(mean 0.5), on the cluster
#              8xV100M32:8,8xT4:4,4xA100:8 (128 GPUs);
#   openb-56   the Alibaba openb default pod list (its qos and gpu_milli; features and
#              true demand generated per pod by --zoo, with the same over-request law) on
#              every 100th node of openb_node_list_gpu_node.csv (13 nodes, 56 GPUs): the
#              full cluster is loaded at about 1 % by this pod list;
#   openb-full the same pods on all 1,213 GPU nodes (6,212 GPUs).
# usage: bench/predictive/experiment.sh [path/to/clustersim] [OUT_DIR]
# Prints a Markdown table and writes it to OUT_DIR/table.md (default /tmp/predictive-exp).
# The openb rows need ../shared/data/alibaba_gpu_v2023 beside the project.
set -eu
here=$(cd "$(dirname "$0")/../.." && pwd)
bin=${1:-$here/build/clustersim}
out=${2:-/tmp/predictive-exp}
data=${CLUSTERSIM_SHARED:-$here/../shared}/data/alibaba_gpu_v2023
mkdir -p "$out"
# The policies, and predictive once more with a 10 % margin on its predicted shares.
policies="binpack fgd predictive predictive-m1.1"
# The policy options of a row (only predictive has any; extra options are its own).
opts_of() {
    case $1 in
    predictive-m1.1) echo "--policy-opt margin=1.1 ${2:-}" ;;
    predictive) echo "--policy-opt margin=1 ${2:-}" ;;
    esac
}
name_of() { [ "$1" = predictive-m1.1 ] && echo predictive || echo "$1"; }
label_of() { [ "$1" = predictive-m1.1 ] && echo "predictive, margin 1.1" || echo "$1"; }

# Time-averaged allocated and effective GPU ratios over [from, to) of timeseries.csv.
window() {
    awk -F, -v a="$2" -v b="$3" 'NR > 1 && $1 >= a && $1 < b { s += $5; e += $7; n++ }
        END { if (n) printf "%.1f %.1f %.0f", 100 * s / n, 100 * e / n, 100 * e / s;
              else printf "- - -" }' "$1/timeseries.csv"
}

# Field of summary.json: per-QoS JCT mean, SLO, preemptions.
qos_jct() {
    grep -o "\"$2\": {\"done\": [0-9]*, \"jct_mean\": [0-9.]*" "$1/summary.json" |
        sed 's/.*jct_mean": //' | awk '{ printf "%.0f", $1 }'
}
slo() {
    grep -o '"slo": {"jobs": [0-9]*, "violations": [0-9]*' "$1/summary.json" |
        sed 's/.*"jobs": \([0-9]*\), "violations": \([0-9]*\)/\2 \/ \1/'
}
preempt() {
    grep -o '"preemptions": [0-9]*' "$1/summary.json" | head -n 1 | sed 's/.*: //'
}

# Median of the numbers on standard input ("-" when none).
median() {
    sort -g | awk '{ a[NR] = $1 } END { if (!NR) print "-";
        else printf "%.1f", NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

# Prediction error of a run's jobs.csv, over the GPU jobs that ran with a prediction:
# share MAE (milli-GPU), median |relative error| of the share (%), % of shares
# under-predicted, and the median |relative error| of the solo time (%) over the BE jobs
# never preempted whose final share covers their demand (a BE share only ever shrinks,
# so they ran at full speed throughout: their run time is their solo time there).
pred_error() {
    f=$1/jobs.csv
    mae=$(awk -F, 'NR > 1 && $5 == "done" && $24 != "" && $14 > 0 {
            n++; d = $24 - $18; ae += d < 0 ? -d : d; if (d < 0) u++ }
        END { if (n) printf "%.0f milli, %.0f %% under", ae / n, 100 * u / n }' "$f")
    [ -n "$mae" ] || { printf -- "-"; return; }
    rel=$(awk -F, 'NR > 1 && $5 == "done" && $24 != "" && $14 > 0 {
            d = ($24 - $18) / $18; print 100 * (d < 0 ? -d : d) }' "$f" | median)
    tim=$(awk -F, 'NR > 1 && $5 == "done" && $24 != "" && $14 > 0 && $3 != "LS" &&
                   $3 != "Guaranteed" && $17 >= $18 && $21 == 0 && $12 > 0 {
            d = ($23 - $12) / $12; print 100 * (d < 0 ? -d : d) }' "$f" | median)
    printf "%s (median %s %%); time median %s %%" "$mae" "$rel" "$tim"
}

row() { # name dir from to
    set -- "$1" "$2" "$3" "$4"
    w=$(window "$2" "$3" "$4")
    pe="-"
    case $1 in predictive*) pe=$(pred_error "$2") ;; esac
    echo "$w" | awk -v p="$1" -v ls="$(qos_jct "$2" LS)" -v be="$(qos_jct "$2" BE)" \
        -v slo="$(slo "$2")" -v ev="$(preempt "$2")" -v pe="$pe" \
        '{ printf "| %s | %s | %s | %s %% | %s | %s | %s | %s | %s |\n", p, $1, $2, $3, ls, be, slo, ev, pe }'
}

header() {
    echo
    echo "### $1"
    echo
    echo "| policy | GPU alloc % | GPU effective % | effective / alloc | JCT LS (s) | JCT BE (s) | LS SLO violations | evictions | prediction error: share MAE, under-predicted (median rel. error); solo time median rel. error |"
    echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
}

run() { # label dir args...
    label=$1 dir=$2
    shift 2
    "$bin" run "$@" --quiet --out "$dir" 2>&1 | sed "s|^clustersim: |  $label: |" >&2
}

{
    echo "Predicted-demand placement (clustersim $("$bin" --version | sed 's/clustersim //'))."
    echo "Truth of every job from the model zoo (--zoo); features and demands are synthetic."
    echo "Utilisation is averaged over the arrival window: from the 5th percentile of the"
    echo "submission times to the last submission."

    gen=$out/gen.csv
    "$bin" trace gen --zoo --zoo-ref V100M32 --out "$gen" --jobs 3000 --seed 11 --rate 60 \
        --frac-ls 0.4
    first=$(awk -F, 'NR > 1 { print $2 }' "$gen" | awk '{ a[NR] = $1 } END { print a[int(NR * 0.05) + 1] }')
    last=$(awk -F, 'NR > 1 { t = $2 } END { print t }' "$gen")
    header "gen: 3,000 generated jobs on 8xV100M32:8,8xT4:4,4xA100:8 (128 GPUs)"
    for p in $policies; do
        run "gen/$p" "$out/gen-$p" --trace "$gen" --cluster 8xV100M32:8,8xT4:4,4xA100:8 \
            --zoo --zoo-ref V100M32 --policy "$(name_of "$p")" $(opts_of "$p")
        row "$(label_of "$p")" "$out/gen-$p" "$first" "$last"
    done

    if [ -d "$data" ]; then
        pods=$data/openb_pod_list_default.csv
        nodes=$out/openb_nodes_every100.csv
        awk -F, 'NR == 1 || (NR - 2) % 100 == 0' "$data/openb_node_list_gpu_node.csv" > "$nodes"
        first=$(awk -F, 'NR > 1 { print $9 }' "$pods" | sort -g | awk '{ a[NR] = $1 }
            END { print a[int(NR * 0.05) + 1] }')
        last=$(awk -F, 'NR > 1 && $9 > m { m = $9 } END { print m }' "$pods")
        for c in 56 full; do
            if [ $c = 56 ]; then
                cl=$nodes
                header "openb-56: 8,152 openb pods on every 100th GPU node (13 nodes, 56 GPUs)"
            else
                cl=$data/openb_node_list_gpu_node.csv
                header "openb-full: 8,152 openb pods on all 1,213 GPU nodes (6,212 GPUs)"
            fi
            for p in $policies; do
                run "openb-$c/$p" "$out/openb-$c-$p" --format alibaba2023 --trace "$pods" \
                    --cluster "$cl" --zoo --zoo-ref V100M16 --policy "$(name_of "$p")" \
                    $(opts_of "$p" "--policy-opt monitor_interval=600")
                row "$(label_of "$p")" "$out/openb-$c-$p" "$first" "$last"
            done
        done
    else
        echo
        echo "(openb rows skipped: $data is absent)"
    fi
} | tee "$out/table.md"
