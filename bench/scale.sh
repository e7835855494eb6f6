#!/bin/sh
# scale.sh: how run time and peak memory grow with the number of jobs and of nodes,
# under binpack and fgd, as two CSV tables and a figure (plots/scale.gp).
#
#   jobs axis:  10^4, 10^5, 10^6 jobs (MAX_JOBS=10000000 adds 10^7) on 1,000 nodes x 8 V100,
#               3,500 jobs/h;
#   nodes axis: 10^5 jobs on 10, 100, 1,000, 10,000 and 100,000 nodes x 8 V100, arrivals
#               scaled with the cluster (3.5 jobs/h per node), so the load stays alike.
#
# Each point is one `clustersim run` with its default outputs (--out), timed by
# bench_sim (wall and user CPU time, the process's peak resident memory; the median of
# REPS replays, default 1); the figure plots CPU time. Traces are generated once,
# seeded, into OUT/.
#
# usage: bench/scale.sh [BUILD] [OUT]
#   BUILD  the build folder (default ./build): BUILD/bench_sim and BUILD/clustersim
#   OUT    default scale-out: OUT/scale-jobs.csv, OUT/scale-nodes.csv, OUT/scale.png
# environment: REPS (1), MAX_JOBS (1000000), MAX_NODES (100000), POLICIES (binpack,fgd)
set -eu
build=${1:-./build}
out=${2:-scale-out}
reps=${REPS:-1}
max_jobs=${MAX_JOBS:-1000000}
max_nodes=${MAX_NODES:-100000}
policies=${POLICIES:-binpack,fgd}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"

# One bench_sim call; appends "x,policy,wall_s,cpu_s,peak_mib" rows for axis value x
# (cpu_s: the process's user time, which a busy machine inflates less than wall time).
run_point() { # x sizes cluster rate dir csv
    "$build/bench_sim" --clustersim "$build/clustersim" --sizes "$2" --policies "$policies" \
        --reps "$reps" --cluster "$3" --rate "$4" --dir "$5" |
        awk -v x="$1" 'NR > 2 { printf "%s,%s,%s,%s,%s\n", x, $2, $3, $4, $7 }' >> "$6"
}

echo "jobs,policy,wall_s,cpu_s,peak_mib" > "$out/scale-jobs.csv"
for n in 10000 100000 1000000 10000000; do
    [ "$n" -le "$max_jobs" ] || continue
    run_point "$n" "$n" "1000xV100M32:8:cpu=96000:mem=786432" 3500 "$out/jobs" \
        "$out/scale-jobs.csv"
done

echo "nodes,policy,wall_s,cpu_s,peak_mib" > "$out/scale-nodes.csv"
for nodes in 10 100 1000 10000 100000; do
    [ "$nodes" -le "$max_nodes" ] || continue
    rate=$(awk -v n="$nodes" 'BEGIN { printf "%.1f", 3.5 * n }')
    run_point "$nodes" 100000 "${nodes}xV100M32:8:cpu=96000:mem=786432" "$rate" \
        "$out/nodes-$nodes" "$out/scale-nodes.csv"
done

cat "$out/scale-jobs.csv" "$out/scale-nodes.csv"
if command -v gnuplot > /dev/null; then
    pols=$(echo "$policies" | tr , ' ')
    gnuplot -e "jobs_csv='$out/scale-jobs.csv'; nodes_csv='$out/scale-nodes.csv'; \
pols='$pols'; outbase='$out/scale'" "$here/../plots/scale.gp"
    echo "figure: $out/scale.png"
fi
