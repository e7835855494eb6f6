# bars.gp: a clustered bar chart, one group of bars per row of the data file (a job
# size class), one bar per policy in the policy's colour (mean JCT by job size).
# clustersim runs `gnuplot VARS bars.gp`; VARS sets: datafile (a header line with the
# policy names, then "label value..." rows; "?" = no value), outbase, n, names, colors,
# plot_title, xlabel_text, ylabel_text. Writes outbase.png and outbase.svg.
do for [fmt in "png svg"] {
    if (fmt eq "png") {
        set terminal pngcairo size 1000,560 noenhanced font "sans,11"
    } else {
        set terminal svg size 1000,560 noenhanced font "sans,11" background rgb "white"
    }
    set output outbase . "." . fmt
    set title plot_title
    set xlabel xlabel_text
    set ylabel ylabel_text
    set style data histograms
    set style histogram clustered gap 1
    set style fill solid 0.85 border rgb "#333333"
    set datafile missing "?"
    set yrange [0:*]
    set grid ytics
    set key top left box opaque
    plot for [i=2:n+1] datafile using i:xtic(1) title columnheader(i) \
        lc rgb word(colors, i-1)
    unset output
}
