# cdf.gp: cumulative distribution functions, one curve per policy, on a log x axis
# (clustersim compare / plot: JCT and wait). Each policy keeps its colour.
# clustersim runs `gnuplot VARS cdf.gp`; VARS sets: datafile (one block per policy,
# "value fraction" per line), outbase (output path without extension), n, names and
# colors (space-separated, one per policy), plot_title, xlabel_text, ylabel_text.
# Writes outbase.png and outbase.svg. Values are seconds (at least 1); the x tics are
# named durations. Curves drawn first are wider, so identical curves stay visible.
do for [fmt in "png svg"] {
    if (fmt eq "png") {
        set terminal pngcairo size 1000,620 noenhanced font "sans,11"
    } else {
        set terminal svg size 1000,620 noenhanced font "sans,11" background rgb "white"
    }
    set output outbase . "." . fmt
    set title plot_title
    set xlabel xlabel_text
    set ylabel ylabel_text
    set logscale x
    set xrange [1:*]
    set xtics ("1 s" 1, "10 s" 10, "1 min" 60, "10 min" 600, "1 h" 3600, \
               "1 d" 86400, "10 d" 864000, "100 d" 8640000, "1000 d" 86400000)
    set mxtics default
    set yrange [0:1.02]
    set grid
    set key bottom right box opaque
    plot for [i=1:n] datafile index (i-1) using 1:2 with steps \
        lw (1.5 + (n - i < 3 ? n - i : 3)) \
        lc rgb word(colors, i) title word(names, i)
    unset output
}
