/*
 * grid.h: the grid file of `clustersim sweep` (README "Sweeps"). A JSON document names
 * the command every cell runs (`run` or `pack`), the axes — traces, clusters, policies
 * (each with lists of option values), run options, seeds — and exclusions. The cells are
 * the cross product of the axes minus the exclusions, in a fixed order (trace, cluster,
 * policy variant, each option axis in file order, seed; the last varies fastest). Each
 * cell has a name derived from its parameters only, so adding a value to an axis keeps
 * the names (and the finished outputs) of the cells that were there.
 *
 * Everything is checked while loading, before any cell runs: unknown members, axes,
 * policies, policy options and run options, missing trace and cluster files, values
 * of the wrong type. Errors name the grid file, line and column. Never prints.
 */
#ifndef STUDY_GRID_H
#define STUDY_GRID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/types.h"

#define GRID_MAX_AXES 16 /* run-option axes */
#define GRID_MAX_ARGS 24 /* arguments one trace or policy variant adds */
#define GRID_MAX_SEEDS 10000
#define GRID_NAME_MAX 200 /* bytes of a cell name (longer ones end in a hash) */

typedef enum grid_kind { GRID_RUN, GRID_PACK } grid_kind;

typedef struct grid_trace {
    char *name; /* short name: the one given, or the file name without extension */
    char *path;
    char *format;              /* NULL = native */
    char *args[GRID_MAX_ARGS]; /* --trace-opt K=V, --skip-bad-rows ... */
    size_t n_args;
} grid_trace;

typedef struct grid_cluster {
    char *name;
    char *spec; /* node-list file or compact spec */
} grid_cluster;

/* A policy with one value of each of its option lists. */
typedef struct grid_policy {
    char *policy;              /* registered name */
    char *label;               /* "las" or "las quantum=2h" */
    char *name;                /* for cell names: "las" or "las_quantum-2h" */
    char *opts[GRID_MAX_ARGS]; /* KEY=VALUE */
    size_t n_opts;
} grid_policy;

/* A run option taking one of several values: "demand": [100, 130]. */
typedef struct grid_axis {
    char *name;          /* as in the grid, without "--" */
    char *flag;          /* "--demand" */
    char **values;       /* text as passed; a boolean axis has "true" / "false" */
    char **short_values; /* for cell names (a path's file name without extension) */
    size_t n_values;
    bool is_flag; /* a boolean: "true" passes the flag, "false" leaves it out */
    bool numeric; /* every value is a number: figures use it as their x axis */
} grid_axis;

typedef struct grid_cell {
    uint32_t trace, cluster, policy;
    uint32_t value[GRID_MAX_AXES]; /* index into axes[a].values */
    uint64_t seed;
    char name[GRID_NAME_MAX + 1];
} grid_cell;

typedef struct grid {
    char *path;
    grid_kind kind;
    grid_trace *traces;
    size_t n_traces;
    grid_cluster *clusters;
    size_t n_clusters;
    grid_policy *policies;
    size_t n_policies;
    grid_axis axes[GRID_MAX_AXES];
    size_t n_axes;
    uint64_t *seeds;
    size_t n_seeds;
    grid_cell *cells;
    size_t n_cells;
    size_t n_excluded; /* cells of the cross product left out by exclusions */
    char **metrics;    /* "report": {"metrics": [...]}; NULL = every metric */
    size_t n_metrics;
} grid;

/* Read and check the grid file at path, and expand its cells into g. Errors:
 * SIM_EIO (the file cannot be read), SIM_EPARSE (bad JSON or bad content: d names the
 * file, line and column), SIM_ENOMEM. On error g is left empty (grid_free is safe). */
int grid_load(const char *path, grid *g, sim_diag *d);
/* Expand text (the grid document) as if read from the file `name`. */
int grid_parse(const char *text, size_t len, const char *name, grid *g, sim_diag *d);
void grid_free(grid *g);

/* The command-line of one cell: `self KIND --trace ... --out dir`, into argv (room for
 * GRID_CELL_ARGV pointers, NULL-terminated). Strings are borrowed from g, dir and
 * seed_buf (at least 24 bytes), which must outlive argv. Returns the count. */
#define GRID_CELL_ARGV (24 + 3 * GRID_MAX_ARGS + 2 * GRID_MAX_AXES)
size_t grid_cell_argv(const grid *g, const grid_cell *c, const char *self, const char *dir,
                      char *seed_buf, char **argv);

/* The cell's configuration without its policy and seed ("cpu050 openb demand=130"), the
 * label of a row of the report's tables: the traces, clusters and option axes that take
 * more than one value, except option axis skip_axis (SIZE_MAX: none). */
void grid_cell_config(const grid *g, const grid_cell *c, size_t skip_axis, char *buf, size_t size);

const char *grid_kind_name(grid_kind k);

#endif
