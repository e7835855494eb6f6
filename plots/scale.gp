# scale.gp: run time and peak memory against the number of jobs and of nodes, one line
# per policy (bench/scale.sh). VARS: jobs_csv, nodes_csv (rows x,policy,wall_s,cpu_s,peak_mib
# after a header), pols (the policies, space-separated), outbase. Writes outbase.png and
# outbase.svg, four panels, log-log.
set datafile separator ","
rows(f, p) = "< grep '," . p . ",' " . f
do for [fmt in "png svg"] {
    if (fmt eq "png") {
        set terminal pngcairo size 1100,800 noenhanced font "sans,10"
    } else {
        set terminal svg size 1100,800 noenhanced font "sans,10" background rgb "white"
    }
    set output outbase . "." . fmt
    set multiplot layout 2,2 title "clustersim run with its outputs: time and peak memory"
    set logscale xy
    set grid
    set key top left
    set xlabel "jobs (1,000 nodes x 8 GPUs, 3,500 jobs/h)"
    set ylabel "CPU time (s)"
    plot for [p in pols] rows(jobs_csv, p) using 1:4 with linespoints title p
    set ylabel "peak memory (MiB)"
    plot for [p in pols] rows(jobs_csv, p) using 1:5 with linespoints title p
    set xlabel "nodes x 8 GPUs (10^5 jobs, 3.5 jobs/h per node)"
    set ylabel "CPU time (s)"
    plot for [p in pols] rows(nodes_csv, p) using 1:4 with linespoints title p
    set ylabel "peak memory (MiB)"
    plot for [p in pols] rows(nodes_csv, p) using 1:5 with linespoints title p
    unset multiplot
    unset output
}
