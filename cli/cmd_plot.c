/*
 * cmd_plot.c: `clustersim plot DIR` — draw the figures of one run (the output directory
 * of `clustersim run --out DIR`) into DIR/figures/, with the same gnuplot scripts as
 * the comparison report.
 */
#include "cli/cli.h"

#include "study/report.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

int cmd_plot(int argc, char **argv)
{
    const char *dir = NULL;
    uint64_t jobs = 2;
    for (int i = 2; i < argc; i++) {
        const char *v;
        int m;
        if (cli_flag(argv, i, "--help") || cli_flag(argv, i, "-h")) {
            printf("usage: clustersim plot DIR [--jobs N]\n"
                   "Draws the figures of the run in DIR (the --out directory of clustersim run)\n"
                   "into DIR/figures/ as PNG and SVG: CDFs of JCT and wait, GPU utilisation,\n"
                   "queue length, fragmentation (when measured) and per-tenant GPU share over\n"
                   "time, mean JCT by job size. Needs gnuplot. --jobs: gnuplot processes at\n"
                   "once (default 2).\n");
            return 0;
        }
        if ((m = cli_opt(argc, argv, &i, "--jobs", &v)) != 0) {
            if (m < 0 || !cli_u64("--jobs", v, 1, 64, &jobs))
                return 2;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return cli_usage_error("unknown option '%s' for 'clustersim plot'", argv[i]);
        } else if (dir) {
            return cli_usage_error("clustersim plot takes one directory, got '%s' and '%s'", dir,
                                   argv[i]);
        } else {
            dir = argv[i];
        }
    }
    if (!dir)
        return cli_usage_error("clustersim plot needs the run's directory (clustersim plot DIR)");
    struct stat sb;
    if (stat(dir, &sb) != 0)
        return cli_usage_error("cannot read the run directory '%s': %s", dir, strerror(errno));
    if (!S_ISDIR(sb.st_mode))
        return cli_usage_error("'%s' is not a directory (clustersim plot takes the --out "
                               "directory of a run)", dir);
    report_outcome o;
    sim_diag d = {0};
    int st = report_plot_run(dir, (unsigned)jobs, &o, &d);
    if (st != SIM_OK) {
        cli_print_diag(&d);
        return cli_exit_code(st);
    }
    if (o.gnuplot_missing) {
        fprintf(stderr, "clustersim: error: gnuplot is not installed, so no figure can be drawn. "
                        "Install it with: apt-get install %s\n",
                REPORT_GNUPLOT_PACKAGE);
        return 1;
    }
    if (o.figures_failed)
        fprintf(stderr, "clustersim: warning: %zu figure(s) not drawn: %s\n", o.figures_failed,
                o.problem);
    if (*o.note)
        fprintf(stderr, "clustersim: note: %s\n", o.note);
    printf("%zu figures in %s/figures/ (PNG and SVG)\n", o.figures_drawn, dir);
    return o.figures_failed ? 1 : 0;
}
