# tenant_share.gp: per-tenant GPU share over time, one panel per tenant, one line per
# policy in the policy's colour.
# clustersim runs `gnuplot VARS tenant_share.gp`; VARS sets: datafile (block
# (t-1)*n + (i-1) holds tenant t under policy i, "time percent" per line), outbase, n,
# names, colors, plot_title, xlabel_text, ylabel_text, ntenants and the array tenant[]
# of tenant names. Writes outbase.png and outbase.svg.
rows = (ntenants + 1) / 2
cols = ntenants > 1 ? 2 : 1
do for [fmt in "png svg"] {
    if (fmt eq "png") {
        set terminal pngcairo size 1100,(280 * rows + 60) noenhanced font "sans,10"
    } else {
        set terminal svg size 1100,(280 * rows + 60) noenhanced font "sans,10" \
            background rgb "white"
    }
    set output outbase . "." . fmt
    set multiplot layout rows, cols title plot_title
    set grid
    set yrange [0:*]
    do for [t=1:ntenants] {
        set title "tenant " . tenant[t]
        set xlabel xlabel_text
        set ylabel ylabel_text
        if (t == 1) {
            set key top right box opaque
        } else {
            unset key
        }
        plot for [i=1:n] datafile index ((t-1)*n + i - 1) using 1:2 with lines \
            lw (1.5 + (n - i < 3 ? n - i : 3)) lc rgb word(colors, i) title word(names, i)
    }
    unset multiplot
    unset output
}
