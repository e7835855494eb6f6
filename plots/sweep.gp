# sweep.gp: a metric of a sweep against a numeric option axis, one line per policy with
# 95 % confidence-interval error bars over the seeds. clustersim runs
# `gnuplot VARS sweep.gp`; VARS sets: datafile (one block per policy, blocks separated
# by two blank lines, rows "x mean ci"; "?" = no value), outbase, n, names, colors,
# plot_title, xlabel_text, ylabel_text. Writes outbase.png and outbase.svg.
do for [fmt in "png svg"] {
    if (fmt eq "png") {
        set terminal pngcairo size 900,560 noenhanced font "sans,11"
    } else {
        set terminal svg size 900,560 noenhanced font "sans,11" background rgb "white"
    }
    set output outbase . "." . fmt
    set title plot_title
    set xlabel xlabel_text
    set ylabel ylabel_text
    set datafile missing "?"
    set grid
    set key outside right top box opaque
    set offsets graph 0.03, graph 0.03, graph 0.05, graph 0.05
    plot for [i=0:n-1] datafile index i using 1:2:3 with yerrorlines \
        lw 2 pt 7 ps 0.8 lc rgb word(colors, i+1) title word(names, i+1)
    unset output
}
