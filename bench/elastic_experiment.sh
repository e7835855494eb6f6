#!/bin/sh
# The elastic-trainers experiment: Pollux's workload-1 (160 jobs, as published) as
# offline elastic jobs, beside two online services whose demand follows generated diurnal
# curves, on 16 nodes x 4 T4; `clustersim compare` of elastic, optimus, static and
# rigid-min writes the report (OUT_DIR/report.md), then the same with a master and a
# parameter server per offline job on nodes of 24 cores (OUT_DIR/ps/report.md).
#   bench/elastic_experiment.sh [BUILD_DIR] [OUT_DIR]
# Needs the Pollux artifact in $SIM_SHARED_DIR/pollux_adaptdl (default ../shared/data).
set -eu
BUILD=${1:-build}
OUT=${2:-elastic-report}
DATA=${SIM_SHARED_DIR:-../shared/data}/pollux_adaptdl
C="$BUILD/clustersim"
mkdir -p "$OUT"
# The offline jobs, in the native format (work, batch size, min/max replicas kept).
"$C" trace convert --trace "$DATA/workloads/workload-1.csv" --format pollux \
    --out "$OUT/offline.csv"
# Two services, 2..12 replicas of one T4 each over a day, for three days; each row
# is an LS job that serves for the three days.
"$C" trace curves --out "$OUT/demand.csv" --services 2 --peak 12 --trough 2 \
    --period 1d --step 10m --length 3d --noise 0.1 --seed 7
{
    head -n 1 "$OUT/offline.csv"
    # One row per service under the converted header, by column name; the columns not
    # named stay empty.
    for s in svc0 svc1; do
        head -n 1 "$OUT/offline.csv" | awk -F, -v id="$s" '{
            v["job_id"] = id; v["submit_time"] = 0; v["duration"] = 259200
            v["num_gpus"] = 1; v["gpu_milli"] = 1000; v["true_milli"] = 1000
            v["replicas"] = 1; v["qos"] = "LS"; v["min_replicas"] = 1; v["max_replicas"] = 12
            row = ""
            for (i = 1; i <= NF; i++) row = row (i > 1 ? "," : "") v[$i]
            print row }'
    done
    tail -n +2 "$OUT/offline.csv"
} >"$OUT/trace.csv"
"$C" compare --trace "$OUT/trace.csv" --cluster 16xT4:4 \
    --policies elastic,optimus,static,rigid-min --out "$OUT" --quiet \
    --demand "$OUT/demand.csv" --pollux-profiles "$DATA/traces" \
    --checkpoint-interval 10m --sample-interval 10m
# The same with parameter-server jobs on nodes of 24 cores: each offline job gets a
# master (2 cores) and one parameter server (4 cores) and 4 cores per trainer; the
# services take no CPU.
mkdir -p "$OUT/ps"
awk -F, -v OFS=, 'NR == 1 {
        for (i = 1; i <= NF; i++) c[$i] = i
        if (!c["ps_replicas"] || !c["ps_cpu_milli"] || !c["master_cpu_milli"] ||
            !c["cpu_milli"] || !c["replicas"] || !c["qos"]) exit 1
        print; next }
    $c["qos"] != "LS" {
        $c["cpu_milli"] = 4000 * $c["replicas"]
        $c["ps_replicas"] = 1; $c["ps_cpu_milli"] = 4000; $c["master_cpu_milli"] = 2000 }
    { print }' "$OUT/trace.csv" >"$OUT/ps/trace.csv"
"$C" compare --trace "$OUT/ps/trace.csv" --cluster 16xT4:4:cpu=24000 \
    --policies elastic,optimus,static,rigid-min --out "$OUT/ps" --quiet \
    --demand "$OUT/demand.csv" --pollux-profiles "$DATA/traces" \
    --checkpoint-interval 10m --sample-interval 10m
