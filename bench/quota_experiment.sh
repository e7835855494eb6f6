#!/bin/sh
# quota_experiment.sh: the multi-tenant quota experiment of the README ("Multi-tenant
# quotas"): the duration predictor's error on each trace (clustersim model eval), then
# each trace replayed under quota, quota with FIFO order inside queues (order=submit),
# quota without borrowing (static partition) and per-tenant FIFO with fair share, and
# Markdown tables of the results (figures read from each run's summary.json and
# run.json). Needs only a POSIX shell, sed and awk.
#
# usage: bench/quota_experiment.sh [BUILD_DIR [OUT_DIR]]   (from the project root;
#        defaults build and out/quota; the public data must be in ../shared/data)
set -eu
build=${1:-build}
out=${2:-out/quota}
cs="$build/clustersim"
data=../shared/data
philly=$data/pollux_adaptdl/traces/philly.csv.gz
vcs=$data/helios_philly_meta/philly_vc.csv
mkdir -p "$out"

# The generated multi-tenant trace (names and commands), and equal quotas of its
# 8 tenants on its 128-GPU cluster.
"$cs" trace gen --out "$out/multitenant.csv" --jobs 20000 --seed 7 --tenants 8 --rate 40 \
    --frac-cpu 0 --diurnal 0.5
printf 'tenant,quota_gpus\n' > "$out/multitenant_quotas.csv"
for t in 0 1 2 3 4 5 6 7; do printf 't0%s,16\n' "$t" >> "$out/multitenant_quotas.csv"; done

echo "## Duration predictor (chronological split 0.7, models frozen at the split)"
for tr in philly multitenant; do
    if [ "$tr" = philly ]; then set -- --trace "$philly" --format philly
    else set -- --trace "$out/multitenant.csv"; fi
    echo
    echo '```'
    "$cs" model eval --kind duration "$@"
    echo '```'
done

# run NAME TRACE-ARGS... -- POLICY-ARGS...
run() {
    name=$1
    shift
    "$cs" run "$@" --sample-interval 300 --checkpoint-interval 30m --quiet --out "$out/$name" \
        2>"$out/$name.log"
}

for tr in philly multitenant; do
    if [ "$tr" = philly ]; then
        set -- --trace "$philly" --format philly --cluster 64xV100M16:8 \
            --quota-share "$vcs:node num"
        prio=hash
    else
        set -- --trace "$out/multitenant.csv" --cluster 16xV100M16:8 \
            --quotas "$out/multitenant_quotas.csv"
        prio=qos
    fi
    run "$tr-quota" "$@" --policy quota --policy-opt priority=$prio
    run "$tr-quota-submit" "$@" --policy quota --policy-opt priority=$prio \
        --policy-opt order=submit
    run "$tr-static" "$@" --policy quota --policy-opt priority=$prio --policy-opt borrow=false
    run "$tr-fairshare" "$@" --policy fairshare
done

num() { # num FILE SED-PATTERN: the first number the pattern captures
    sed -n "s/.*$2.*/\\1/p" "$1" | head -n 1
}
n='\([-0-9.e+]*\|null\)' # a number, or null where there is none (a mean over no job)

for tr in philly multitenant; do
    echo
    echo "## $tr"
    echo
    echo "| policy | done | rejected | JCT mean (s) | JCT p95 (s) | wait mean (s) | GPU util | preemptions | lost GPU-h | Jain | replay wall (s) | events/s |"
    echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
    for p in quota quota-submit static fairshare; do
        s="$out/$tr-$p/summary.json"
        r="$out/$tr-$p/run.json"
        echo "| $p | $(num "$s" "\"done\": $n, \"rejected\"") | $(num "$s" "\"rejected\": $n, \"unfinished\"") | $(num "$s" "\"jct_s\": {\"count\": [0-9]*, \"mean\": $n,") | $(num "$s" "\"jct_s\": {.*\"p95\": $n,") | $(num "$s" "\"wait_s\": {\"count\": [0-9]*, \"mean\": $n,") | $(num "$s" "\"allocated\": $n, \"effective\"") | $(num "$s" "\"preemptions\": $n,") | $(num "$s" "\"lost_gpu_hours\": $n,") | $(num "$s" "\"jain_mean\": $n,") | $(num "$r" "\"wall_s\": $n,") | $(num "$r" "\"events_per_s\": $n,") |"
    done
    echo
    echo "Per tenant (JCT and wait means in s; shares of the samples above and below quota, and below quota while jobs of the tenant waited):"
    echo
    echo "| policy | tenant | quota GPUs | jobs | JCT mean | wait mean | above | below | below, waiting |"
    echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
    for p in quota static fairshare; do
        s="$out/$tr-$p/summary.json"
        sed -n 's/^    "\([^"]*\)": {"quota_gpus": .*/\1/p' "$s" | while read -r t; do
            line=$(grep "^    \"$t\": {\"done\"" "$s" || true)
            q=$(grep "^    \"$t\": {\"quota_gpus\"" "$s")
            [ -n "$line" ] || continue
            echo "| $p | $t | $(echo "$q" | sed -n "s/.*\"quota_gpus\": $n,.*/\\1/p") | $(echo "$line" | sed -n "s/.*\"done\": $n,.*/\\1/p") | $(echo "$line" | sed -n "s/.*\"jct_mean\": $n,.*/\\1/p") | $(echo "$line" | sed -n "s/.*\"wait_mean\": $n,.*/\\1/p") | $(echo "$q" | sed -n "s/.*\"above_quota\": $n,.*/\\1/p") | $(echo "$q" | sed -n "s/.*\"below_quota\": $n,.*/\\1/p") | $(echo "$q" | sed -n "s/.*\"below_quota_waiting\": $n}.*/\\1/p") |"
        done
    done
    echo
    echo "Predictor error during the quota replay (predictions made when each job became schedulable):"
    echo
    echo '```'
    "$cs" model eval --kind duration --jobs "$out/$tr-quota/jobs.csv"
    echo '```'
done
