#!/bin/sh
# The model-class stage profiles shipped in models/data/model_profiles.csv, derived from
# the Muri traces (trace1..4, Philly-derived): for each model_name, the median over the
# trace's jobs of resource_time_0 (data loading: stage_cpu_ms, as the muri reader maps
# it), resource_time_1 (stage_gpu_ms) and resource_time_2 (stage_net_ms), milliseconds;
# stage_storage_ms is 0 (the traces do not split storage from preprocessing); jobs = the
# jobs counted. The interleave policy gives these profiles to jobs that have none of
# their own but name a model class (option `profiles`).
#
# usage: bench/muri/profiles.sh [DATA] > models/data/model_profiles.csv
#   DATA  default ../shared/data/muri
set -eu
data=${1:-../shared/data/muri}
t=$data/sim_trace_data
{
    tail -n +2 "$t/trace1.csv"
    gzip -dc "$t/trace2.csv.gz" | tail -n +2
    tail -n +2 "$t/trace3.csv"
    tail -n +2 "$t/trace4.csv"
} | awk -F, '{ print $5 "," $10 "," $11 "," $12 }' | sort -t, -k1,1 |
    awk -F, '
    function median(a, n,    i, j, x) {
        for (i = 2; i <= n; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
        return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    function flush() {
        if (n) printf "%s,0,%g,%g,%g,%d\n", m, median(c, n), median(g, n), median(w, n), n
        n = 0
    }
    BEGIN { print "model,stage_storage_ms,stage_cpu_ms,stage_gpu_ms,stage_net_ms,jobs" }
    $1 != m { flush(); m = $1 }
    { n++; c[n] = $2 + 0; g[n] = $3 + 0; w[n] = $4 + 0 }
    END { flush() }'
