/*
 * cmd_sweep.c: `clustersim sweep GRID` — the command line of a sweep (study/sweep.h):
 * load and check the grid, run its pending cells in worker processes or over MPI ranks,
 * show progress, then write sweep.csv and the report.
 */
#include "cli/cli.h"

#include "study/grid.h"
#include "study/sweep.h"
#ifdef SIM_HAVE_MPI
#include "study/sweep_mpi.h"
#endif

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage[] =
    "usage: clustersim sweep GRID [--out DIR] [--jobs N] [options]\n"
    "  GRID          the grid file (JSON; README \"Sweeps\")\n"
    "  --out DIR     cells/<cell>/, sweep.csv, report.md, report.html, figures/ (default\n"
    "                sweep-out)\n"
    "  --jobs N      cells at once on this machine (default: the number of cores, %ld here)\n"
    "  --redo        run every cell again, complete or not\n"
    "  --check       check the grid and each value's options and inputs (as a sweep does\n"
    "                before it runs), print the number of cells and exit\n"
    "  --list        print the cells' names and whether each is complete, and exit\n"
    "  --no-figures  write the tables only\n"
    "  --quiet       no progress display\n"
    "Complete cells (summary.json present) are skipped, so an interrupted sweep resumes\n"
    "where it stopped. Under mpirun or srun (a build with -DSIM_MPI=ON) the cells are\n"
    "spread over the ranks and --jobs is ignored. Exit status: 0 every cell completed, 1\n"
    "some cell failed (the others still ran; the report lists it), 2 bad grid or usage.\n";

typedef struct progress {
    bool live, quiet;
    double last;
    size_t shown_done; /* cells done at the last line written */
} progress;

static long cores(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? n : 1;
}

static void fmt_time(char *b, size_t n, double s)
{
    if (s < 60)
        snprintf(b, n, "%.0fs", s);
    else if (s < 3600)
        snprintf(b, n, "%dm%02ds", (int)(s / 60), (int)s % 60);
    else
        snprintf(b, n, "%dh%02dm", (int)(s / 3600), (int)(s / 60) % 60);
}

static void show(void *ctx, const sweep *s, size_t done, size_t failed, size_t total,
                 double elapsed)
{
    progress *pg = ctx;
    (void)s;
    if (pg->quiet)
        return;
    /* Not a terminal: one line every 10 s and at the end. */
    if (!pg->live && (done == total ? done == pg->shown_done : elapsed - pg->last < 10))
        return;
    pg->last = elapsed;
    pg->shown_done = done;
    char el[32], left[32] = "?";
    fmt_time(el, sizeof el, elapsed);
    if (done > 0)
        fmt_time(left, sizeof left, elapsed / (double)done * (double)(total - done));
    int width = 30, fill = total ? (int)((double)width * (double)done / (double)total) : width;
    char bar[64];
    for (int k = 0; k < width; k++)
        bar[k] = k < fill ? '#' : '.';
    bar[width] = '\0';
    fprintf(stderr, "%s[%s] %zu/%zu cells", pg->live ? "\r\033[K" : "", bar, done, total);
    if (failed)
        fprintf(stderr, " (%zu failed)", failed);
    fprintf(stderr, ", %s elapsed, ~%s left%s", el, left, pg->live ? "" : "\n");
}

static int finish(const sweep *s, bool figures, unsigned jobs, const char *out)
{
    sweep_outcome o;
    sim_diag d = {0};
    size_t shown = 0;
    for (size_t i = 0; i < s->g->n_cells; i++)
        if (s->cells[i].state == SWEEP_FAILED && ++shown <= 10)
            fprintf(stderr, "clustersim: cell %s failed: %s (log: %s/sweep.log)\n",
                    s->g->cells[i].name, s->cells[i].error, s->cells[i].dir);
    if (shown > 10)
        fprintf(stderr, "clustersim: ... and %zu more failed cells (see %s/report.md)\n",
                shown - 10, out);
    int st = sweep_write_results(s, figures, jobs, &o, &d);
    if (st != SIM_OK) {
        cli_print_diag(&d);
        return cli_exit_code(st);
    }
    if (o.gnuplot_missing)
        fprintf(stderr, "clustersim: warning: gnuplot is not installed, so no figure was drawn "
                        "(apt-get install gnuplot-nox)\n");
    if (o.figures_failed)
        fprintf(stderr, "clustersim: warning: %zu figure(s) not drawn: %s\n", o.figures_failed,
                o.problem);
    printf("sweep: %zu of %zu cells complete, %zu failed; %s/sweep.csv (%zu metrics), "
           "%s/report.md and %s/report.html",
           o.cells_ok, s->g->n_cells, o.cells_failed, out, o.metrics, out, out);
    if (o.figures_drawn)
        printf(" (%zu figures in %s/figures/)", o.figures_drawn, out);
    printf("\n");
    return o.cells_failed || o.cells_ok < s->g->n_cells ? 1 : 0;
}

int cmd_sweep(int argc, char **argv)
{
    const char *grid_path = NULL, *out = "sweep-out";
    uint64_t jobs = (uint64_t)cores();
    bool redo = false, check = false, list = false, figures = true, quiet = false;
    bool help = false;
    static const char *const flags[] = {"--redo",  "--check", "--list", "--no-figures",
                                        "--quiet", "--help",  "-h"};
    bool *const flag_set[] = {&redo, &check, &list, &figures, &quiet, &help, &help};
    for (int i = 2; i < argc; i++) {
        size_t f = 0;
        while (f < sizeof flags / sizeof flags[0] && !cli_flag(argv, i, flags[f]))
            f++;
        if (f < sizeof flags / sizeof flags[0]) {
            /* --no-figures clears `figures`; every other flag sets its variable. */
            *flag_set[f] = flag_set[f] != &figures;
            continue;
        }
        const char *v = NULL;
        int m;
        if ((m = cli_opt(argc, argv, &i, "--out", &v)) != 0) {
            if (m < 0 || !cli_out_dir("--out", v))
                return 2;
            out = v;
        } else if ((m = cli_opt(argc, argv, &i, "--jobs", &v)) != 0) {
            if (m < 0 || !cli_u64("--jobs", v, 1, 4096, &jobs))
                return 2;
        } else if (argv[i][0] != '-' && !grid_path) {
            grid_path = argv[i];
        } else {
            return cli_usage_error("unexpected argument '%s' for 'clustersim sweep' (see "
                                   "clustersim sweep --help)",
                                   argv[i]);
        }
    }
    if (help) {
        printf(usage, cores());
        return 0;
    }
    if (!grid_path)
        return cli_usage_error("clustersim sweep needs a grid file (see clustersim sweep "
                               "--help)");
    if (check && list)
        return cli_usage_error("--check and --list are two ways to look at a grid: give one");

    int rank = 0, size = 1;
    sim_diag d = {0};
    long launched = check || list ? 1 : sweep_launched_processes();
#ifndef SIM_HAVE_MPI
    if (launched > 1)
        return cli_usage_error("this process is one of %ld that mpirun or srun started, but "
                               "this clustersim was built without MPI (configure with "
                               "-DSIM_MPI=ON): each would run the whole sweep",
                               launched);
#else
    bool mpi = launched > 1;
    if (mpi && sweep_mpi_init(&argc, &argv, &rank, &size, &d) != SIM_OK) {
        cli_print_diag(&d);
        sweep_mpi_finalize();
        return 2;
    }
#endif
    grid g;
    sweep s = {0};
    char self[PATH_MAX];
    int rc = 2, st = grid_load(grid_path, &g, &d);
    if (st != SIM_OK) {
        if (rank == 0)
            cli_print_diag(&d);
        goto out;
    }
    if (check) {
        if (!study_self_exe(self, sizeof self, argv[0]))
            goto out;
        if ((st = sweep_check_grid(&g, self, (unsigned)jobs, &d)) != SIM_OK) {
            cli_print_diag(&d);
            rc = cli_exit_code(st);
            goto out;
        }
        char size_text[1024];
        sweep_grid_size_text(&g, size_text, sizeof size_text);
        printf("%s: %zu cells (`clustersim %s`: %s)\n", grid_path, g.n_cells,
               grid_kind_name(g.kind), size_text);
        rc = 0;
        goto out;
    }
    if (!study_self_exe(self, sizeof self, argv[0]))
        goto out;
    if ((st = sweep_init(&s, &g, out, self, redo, &d)) != SIM_OK) {
        cli_print_diag(&d);
        rc = cli_exit_code(st);
        goto out;
    }
    if (list) {
        for (size_t i = 0; i < g.n_cells; i++)
            printf("%s %s\n", g.cells[i].name,
                   s.cells[i].state == SWEEP_SKIPPED ? "complete" : "to run");
        rc = 0;
        goto out;
    }
    /* Rank 0 checks the inputs; under MPI every rank learns the outcome. */
    if (rank == 0 && s.n_pending && (st = sweep_check(&s, (unsigned)jobs, &d)) != SIM_OK)
        cli_print_diag(&d);
#ifdef SIM_HAVE_MPI
    if (size > 1)
        st = sweep_mpi_share(st);
#endif
    if (st != SIM_OK) {
        rc = cli_exit_code(st);
        goto out;
    }
    progress pg = {
        .live = !quiet && isatty(2), .quiet = quiet || rank != 0, .shown_done = (size_t)-1};
    if (rank == 0 && !quiet)
        fprintf(stderr,
                "clustersim sweep: %zu cells, %zu complete already, %zu to run on %s"
                "%d %s; outputs in %s/\n",
                g.n_cells, s.n_skipped, s.n_pending, size > 1 ? "" : "up to ",
                size > 1 ? size : (int)jobs, size > 1 ? "MPI ranks" : "processes", out);
#ifdef SIM_HAVE_MPI
    if (size > 1)
        st = sweep_run_mpi(&s, show, &pg, &d);
    else
#endif
        st = sweep_run_local(&s, (unsigned)jobs, show, &pg, &d);
    if (pg.live)
        fputs("\n", stderr);
    if (st != SIM_OK) {
        cli_print_diag(&d);
        rc = 1;
    }
    if (rank == 0)
        rc = st != SIM_OK ? 1 : finish(&s, figures, (unsigned)jobs, out);
    else
        rc = 0;
out:
    sweep_fini(&s);
    grid_free(&g);
#ifdef SIM_HAVE_MPI
    if (mpi)
        sweep_mpi_finalize();
#endif
    return rc;
}
