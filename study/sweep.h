/*
 * sweep.h: running the cells of a grid (grid.h) and putting their results together.
 * Each cell is one `clustersim run` or `clustersim pack` process (this executable) with
 * its outputs in OUT/cells/<cell name>/. A cell is complete when its summary.json
 * parses: runs write it last, by rename, after every other output; for pack cells the
 * sweep writes it (by rename) from pack.csv once the process has succeeded. A complete
 * cell is skipped when the sweep runs again; any other cell has its outputs removed
 * before it starts, so an interrupted or failed cell never looks finished. A failing
 * cell is recorded with the last line its process wrote and does not stop the others.
 *
 * Cells run locally in N worker processes (sweep_run_local) or, in a build with MPI,
 * over the ranks of an MPI job (sweep_mpi.h). Then sweep_write_results writes
 * OUT/sweep.csv (one row per cell: its parameters and every numeric member of its
 * summary.json) and OUT/report.md + report.html (per metric, a table of the mean and
 * 95 % confidence interval over seeds for every configuration and policy) with gnuplot
 * figures of each metric against each numeric option axis. Library code: never prints.
 */
#ifndef STUDY_SWEEP_H
#define STUDY_SWEEP_H

#include "study/grid.h"

typedef enum sweep_state {
    SWEEP_PENDING, /* to run */
    SWEEP_SKIPPED, /* complete from an earlier sweep */
    SWEEP_DONE,    /* ran and completed now */
    SWEEP_FAILED,  /* ran and failed: error says why */
} sweep_state;

typedef struct sweep_cell {
    sweep_state state;
    double wall_s;   /* the cell's process, when it ran */
    char dir[1300];  /* OUT/cells/<name> */
    char error[512]; /* "exit status 2: clustersim: error: ..." */
} sweep_cell;

typedef struct sweep {
    const grid *g;
    char out[1024];
    char self[1024];   /* the clustersim executable */
    sweep_cell *cells; /* g->n_cells */
    size_t n_pending, n_skipped;
    bool redo; /* run every cell, complete or not */
} sweep;

/* Progress: called as cells end (and about every 0.25 s while they run, locally). */
typedef void (*sweep_progress)(void *ctx, const sweep *s, size_t done, size_t failed, size_t total,
                               double elapsed_s);

/* Set up s for grid g with outputs under out (created): finds the complete cells when
 * redo is false. Errors: SIM_EIO (a directory cannot be created), SIM_ENOMEM. */
int sweep_init(sweep *s, const grid *g, const char *out, const char *self, bool redo, sim_diag *d);
void sweep_fini(sweep *s);

/* Whether a cell directory holds complete outputs: its summary.json parses as an
 * object (it is renamed into place after every other output). */
bool sweep_cell_complete(const char *dir);

/* Remove what an earlier attempt left in the cell's directory (creating it). Returns
 * false when it cannot be created. */
bool sweep_cell_clear(const sweep *s, size_t i);

/* After cell i's process ended with exit_status (its log in dir/sweep.log): for a
 * pack cell, write summary.json from pack.csv; record DONE or FAILED with the reason. */
void sweep_cell_finish(sweep *s, size_t i, int exit_status, double wall_s);

/* Check run cells' inputs before any cell runs: `clustersim run --check` (it reads the
 * trace and cluster and checks every option) on one cell per trace, cluster, policy
 * variant and option value, at most jobs at once, logs in OUT/check/. Pack cells are
 * not checked (pack has no --check). Returns SIM_OK, SIM_EINVAL when a check failed
 * (d names the grid file and the cell, with the check's last line), or SIM_EIO. */
int sweep_check(const sweep *s, unsigned jobs, sim_diag *d);

/* The same checks of grid g without an output folder (`sweep --check`): their logs go
 * to a temporary folder under $TMPDIR (else /tmp), removed afterwards. self: the
 * clustersim executable. */
int sweep_check_grid(const grid *g, const char *self, unsigned jobs, sim_diag *d);

/* Run the pending cells, at most jobs at once. Returns SIM_OK, or SIM_EIO when
 * processes cannot be started (d says why; cells not started stay pending). */
int sweep_run_local(sweep *s, unsigned jobs, sweep_progress fn, void *ctx, sim_diag *d);

/* The argument vector of cell i (argv has room for GRID_CELL_ARGV pointers). */
void sweep_cell_argv(const sweep *s, size_t i, char *seed_buf, char **argv);

/* How many processes the launcher that started this one started (mpirun, mpiexec or
 * Slurm's srun, read from their environment variables); 1 when none did. */
long sweep_launched_processes(void);

/* What sweep_write_results did. */
/* Figures a sweep report draws at most. */
#define SWEEP_MAX_FIGURES 48

typedef struct sweep_outcome {
    size_t cells_ok, cells_failed, metrics;
    size_t figures_drawn, figures_failed;
    bool figures_capped; /* more figures were due than a report draws (SWEEP_MAX_FIGURES) */
    bool gnuplot_missing;
    char problem[512];
} sweep_outcome;

/* The grid's size as factors that multiply to its cross product, then the exclusions
 * and the cells left, into buf (truncated to size): "1 trace x 1 cluster x 2 policy
 * variants x 6 option combinations (restart-penalty 2 x checkpoint-interval 3) x 1 seed
 * = 12 combinations, 1 excluded: 11 cells" ("= 12 cells" without exclusions; no option
 * factor without an axis). */
void sweep_grid_size_text(const grid *g, char *buf, size_t size);

/* Write OUT/sweep.csv, OUT/report.md, OUT/report.html and OUT/figures/. Errors: SIM_EIO
 * (a file cannot be written), SIM_ENOMEM, with d filled. */
int sweep_write_results(const sweep *s, bool figures, unsigned jobs, sweep_outcome *o, sim_diag *d);

#endif
