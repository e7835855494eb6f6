#!/bin/sh
# The elastic-trainers experiment: Pollux's workload-1 (160 jobs, as published) as
# offline elastic jobs, beside two online services whose demand follows generated diurnal
# curves, on 16 nodes x 4 T4; `clustersim compare` of elastic, optimus, static and
# rigid-min writes the report.
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
