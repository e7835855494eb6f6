# pack.gp: the figure of `clustersim pack` — share of the cluster's GPUs allocated
# against the arrived GPU demand (both in % of the cluster's GPU capacity), one line per
# policy (mean over seeds), with the demand itself as a dashed reference.
# Variables (set with gnuplot -e): datafile (pack.csv), outfile (a .png), figtitle,
# policies (space-separated names, in pack.csv's order), demand (the last step, %).
if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
    set terminal pngcairo size 1000,650 noenhanced font ",11"
} else {
    set terminal png size 1000,650 noenhanced
}
set output outfile
set datafile separator ","
set title figtitle
set xlabel "arrived GPU demand (% of the cluster's GPU capacity)"
set ylabel "GPUs allocated (% of capacity)"
set xrange [0:demand]
set yrange [0:105]
set grid
set key left top
plot (x < 100 ? x : 100) with lines dashtype 2 linecolor rgb "#888888" title "demand", \
     for [i=1:words(policies)] datafile skip 1 \
         using 2:(strcol(1) eq word(policies, i) ? $4 : NaN) \
         with lines linewidth 2 title word(policies, i)
