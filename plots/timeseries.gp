# timeseries.gp: sampled series per policy over time (utilisation, queue length,
# fragmentation), one colour per policy. With two series (allocated and effective
# utilisation) they go into two panels, one above the other, on the same axes.
# clustersim runs `gnuplot VARS timeseries.gp`; VARS sets: datafile (one block per
# policy, "time value [value2]" per line), outbase, n, names, colors, plot_title,
# xlabel_text, ylabel_text, ncols (1 or 2), col1 and col2 (the panels' names), ymax
# (the top of the y axis, or 0 to fit the data).
# Writes outbase.png and outbase.svg. Lines drawn first are wider, so identical lines
# stay visible.
height = ncols == 2 ? 900 : 560
do for [fmt in "png svg"] {
    if (fmt eq "png") {
        set terminal pngcairo size 1000,height noenhanced font "sans,11"
    } else {
        set terminal svg size 1000,height noenhanced font "sans,11" background rgb "white"
    }
    set output outbase . "." . fmt
    set xlabel xlabel_text
    set ylabel ylabel_text
    if (ymax > 0) {
        set yrange [0:ymax]
    } else {
        set yrange [0:*]
    }
    set grid
    set key outside right top box
    if (ncols == 2) {
        set multiplot layout 2, 1 title plot_title
        do for [c=1:2] {
            set title (c == 1 ? col1 : col2)
            plot for [i=1:n] datafile index (i-1) using 1:(column(c + 1)) with lines \
                lw (1.5 + (n - i < 3 ? n - i : 3)) lc rgb word(colors, i) title word(names, i)
        }
        unset multiplot
    } else {
        set title plot_title
        plot for [i=1:n] datafile index (i-1) using 1:2 with lines \
            lw (1.5 + (n - i < 3 ? n - i : 3)) lc rgb word(colors, i) title word(names, i)
    }
    unset output
}
