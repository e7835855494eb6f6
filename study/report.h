/*
 * report.h: policy comparison reports. Given the output directories of finished runs
 * (README "Outputs": summary.json, jobs.csv, timeseries.csv, tenants.csv, run.json),
 * write DIR/report.md, a self-contained DIR/report.html (figures embedded as base64
 * PNG) and the figures DIR/figures/ (PNG and SVG), drawn by gnuplot from the scripts in
 * plots/. The first policy is the baseline every other one is compared with. A run
 * that failed, or whose outputs cannot be read, is listed with the reason and left out
 * of the tables; it never stops the report. The report holds no timestamp and no wall
 * time: the same runs give the same report.md.
 */
#ifndef STUDY_REPORT_H
#define STUDY_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/types.h"

#define REPORT_MAX_POLICIES 16 /* policies in one comparison */

/* One run of the comparison, as the caller launched it. */
typedef struct report_run_spec {
    const char *name;   /* "binpack" or "binpack-seed2" (borrowed) */
    const char *policy; /* policy name */
    uint64_t seed;
    const char *dir;    /* its output directory */
    bool failed;        /* the run did not complete */
    const char *error;  /* why, when failed ("exit status 2: clustersim: error: ...") */
} report_run_spec;

typedef struct report_config {
    const char *out_dir;     /* report.md, report.html and figures/ are written here */
    int argc;                /* the command that produced the comparison */
    char **argv;
    const char *trace;       /* trace path as given; NULL when the trace was generated */
    const char *trace_note;  /* one sentence describing a generated trace, or NULL */
    const char *format;      /* trace format (NULL = native) */
    const char *cluster;     /* cluster file or compact spec */
    const char *catalog;     /* GPU catalog (NULL = the shipped one) */
    const report_run_spec *runs; /* policies in order of first appearance; baseline first */
    size_t n_runs;
    const char *seeds_text;  /* the seeds as given ("1..5"), or NULL for one seed */
    bool figures;            /* draw the figures (needs gnuplot) */
    unsigned jobs;           /* gnuplot processes at once (>= 1) */
} report_config;

/* What happened, for the command to tell the user. */
typedef struct report_outcome {
    size_t runs_ok;          /* runs whose outputs were read */
    size_t runs_failed;      /* failed runs, and runs whose outputs could not be read */
    size_t figures_drawn;    /* figures written (each as PNG and SVG) */
    size_t figures_failed;
    bool gnuplot_missing;    /* figures were asked for but gnuplot is not installed */
    char problem[768];       /* the first figure problem (gnuplot's last line), or "" */
    char note[256];          /* why figures were left out for lack of data, or "" */
} report_outcome;

/* The package that provides gnuplot, for messages. */
#define REPORT_GNUPLOT_PACKAGE "gnuplot-nox"

/* Write the comparison report. Errors (an output that cannot be written, out of memory)
 * return a negative SIM_E* code with d filled; failed runs and failed figures do not:
 * they are counted in *o and described in the report. */
int report_write(const report_config *c, report_outcome *o, sim_diag *d);

/* Draw the figures of one run directory into run_dir/figures/ (`clustersim plot`).
 * Errors: SIM_EIO / SIM_EPARSE when the run's outputs cannot be read, with d filled. */
int report_plot_run(const char *run_dir, unsigned jobs, report_outcome *o, sim_diag *d);

/* Mean, sample standard deviation and half-width of the 95 % Student-t confidence
 * interval of the mean of v[0..k); NAN where undefined (sd and ci need k >= 2). */
void report_mean_ci(const double *v, size_t k, double *mean, double *sd, double *ci);

/* True when an executable `gnuplot` is on PATH. */
bool report_gnuplot_available(void);

#endif
