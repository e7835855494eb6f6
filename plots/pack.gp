# pack.gp: the figure of `clustersim pack` — share of the cluster's GPUs allocated
# against the arrived GPU demand (both in % of the cluster's GPU capacity), one line per
# policy (mean over seeds), with the demand itself dashed; the right panel zooms on the
# demand from 60 % on, where the policies part.
# Variables (set with gnuplot -e): datafile (pack.csv), outfile (a .png), figtitle,
# policies (space-separated names, in pack.csv's order), demand (the last step, %).
if (strstrt(GPVAL_TERMINALS, "pngcairo") > 0) {
    set terminal pngcairo size 1400,600 noenhanced font ",11"
} else {
    set terminal png size 1400,600 noenhanced
}
set output outfile
set datafile separator ","
set linetype 1 linecolor rgb "#1b9e77" linewidth 2 dashtype 1
set linetype 2 linecolor rgb "#d95f02" linewidth 2 dashtype 2
set linetype 3 linecolor rgb "#7570b3" linewidth 2 dashtype 3
set linetype 4 linecolor rgb "#e7298a" linewidth 2 dashtype 4
set linetype 5 linecolor rgb "#66a61e" linewidth 2 dashtype 5
set linetype 6 linecolor rgb "#e6ab02" linewidth 2 dashtype 1
set linetype 7 linecolor rgb "#a6761d" linewidth 2 dashtype 2
set linetype 8 linecolor rgb "#000000" linewidth 2 dashtype 3
set linetype cycle 8
set multiplot layout 1,2 title figtitle
set xlabel "arrived GPU demand (% of the cluster's GPU capacity)"
set ylabel "GPUs allocated (% of capacity)"
set grid
set key left top
set xrange [0:demand]
set yrange [0:105]
plot (x < 100 ? x : 100) with lines dashtype 2 linecolor rgb "#888888" title "demand", \
     for [i=1:words(policies)] datafile skip 1 \
         using 2:(strcol(1) eq word(policies, i) ? $4 : NaN) \
         with lines linetype i title word(policies, i)
set key right bottom
zoom = demand > 60 ? 60 : 0
set xrange [zoom:demand]
set yrange [*:*]
plot for [i=1:words(policies)] datafile skip 1 \
         using 2:(strcol(1) eq word(policies, i) && $2 >= zoom ? $4 : NaN) \
         with lines linetype i title word(policies, i)
unset multiplot
