/*
 * report_int.h: what the report keeps of each run, shared by the report's files:
 * report_load.c (reads a run directory), report.c (tables, report.md and report.html),
 * report_doc.c (the Markdown + HTML writer) and report_fig.c (figures). Per-job data
 * is reduced while it is read (sorted quantile grids, sums per class and tenant), so
 * memory does not grow with the trace beyond one sort buffer.
 */
#ifndef STUDY_REPORT_INT_H
#define STUDY_REPORT_INT_H

#include "study/report.h"
#include "base/intern.h"

#include <stdio.h>

/* The summary table's rows. */
typedef enum report_metric {
    RM_JOBS_DONE,
    RM_JOBS_REJECTED,
    RM_JOBS_UNFINISHED,
    RM_JCT_MEAN,
    RM_JCT_MEDIAN,
    RM_JCT_P95,
    RM_JCT_P99,
    RM_WAIT_MEAN,
    RM_WAIT_MEDIAN,
    RM_WAIT_P95,
    RM_WAIT_P99,
    RM_MAKESPAN,
    RM_GROUPS_DONE, /* job groups (traces with a group column only) */
    RM_GROUP_MEAN,
    RM_GROUP_P50,
    RM_GROUP_P99,
    RM_UTIL_ALLOC,
    RM_UTIL_EFF,
    RM_FRAG,
    RM_PREEMPTIONS,
    RM_SLO_VIOLATIONS,
    RM_FAIRNESS,
    RM_COUNT
} report_metric;

/* Job-size classes by the GPUs a job asks for in total (num_gpus x gpu_milli / 1000). */
typedef enum report_class {
    RC_CPU,   /* no GPU */
    RC_FRAC,  /* less than one GPU */
    RC_ONE,   /* exactly one GPU */
    RC_2_4,   /* more than 1, at most 4 */
    RC_5_8,   /* more than 4, at most 8 */
    RC_MANY,  /* more than 8 */
    RC_COUNT
} report_class;

extern const char *const report_class_name[RC_COUNT];

#define REPORT_MAX_COLS (REPORT_MAX_POLICIES + 2) /* columns of a report table */
#define REPORT_QGRID 2001     /* points of a quantile grid: p = k / 2000 */
#define REPORT_MAX_FRAG 8 /* fragmentation (and online-service) columns kept from timeseries.csv   \
                           */
#define REPORT_MAX_INPUTS 16  /* input files of run.json listed in the report */
#define REPORT_SLOWDOWN_FLOOR_S 10.0 /* bounded slowdown: jct / max(work, 10 s) */

/* Per tenant, per run: from summary.json, and bounded slowdown sums from jobs.csv. */
typedef struct report_tenant {
    bool present;
    double done, jct_mean_s, wait_mean_s, gpu_hours, quota_gpus;
    double slowdown_sum;
    uint64_t slowdown_n;
} report_tenant;

/* Figures of runs with elastic jobs or online services (summary.json's "elastic" and
 * "online" objects; NAN when absent). */
enum {
    REL_OFFLINE_JCT,
    REL_SCALE_EVENTS,
    REL_SCALE_LOST,
    REL_DEMAND_GPUH,
    REL_SHORT_GPU_S,
    REL_SHORT_PERIODS,
    REL_CPU_UTIL, /* a fraction; the table shows percent */
    REL_COUNT
};

typedef struct report_run {
    report_run_spec spec;
    double el[REL_COUNT];
    bool ok;
    char error[768];          /* why not ok, as one line */
    sim_diag diag;            /* why not ok, when reading its outputs failed */
    int load_status;          /* SIM_OK, or the SIM_E* code of that failure */
    double m[RM_COUNT];       /* NAN = not available */
    bool fair_by_quota;       /* fairness of quota-normalised GPU-hours (else slowdown) */
    char frag_name[48];       /* the summary's fragmentation probe, "" when none */
    char summary_policy[64];  /* the policy summary.json names */
    uint32_t nodes, gpus;
    double slo_jobs;
    /* jobs.csv */
    uint64_t jobs_total, jobs_done;
    double first_submit_s, last_submit_s;
    double req_gpu_s;         /* sum over jobs of work x GPUs asked */
    uint64_t class_jobs[RC_COUNT];     /* all jobs */
    uint64_t class_done[RC_COUNT];     /* done jobs */
    double class_jct_sum[RC_COUNT];    /* JCT of done jobs, seconds */
    double jct_q[REPORT_QGRID];        /* JCT quantile grid of done jobs (when jobs_done) */
    double wait_q[REPORT_QGRID];       /* wait of started jobs */
    uint64_t waits;                    /* started jobs */
    report_tenant *tenants;            /* indexed by report tenant id */
    uint32_t n_tenants;
    /* timeseries.csv */
    size_t n_samples;
    double *ts_time, *ts_pending, *ts_alloc, *ts_eff; /* seconds, jobs, ratios 0..1 */
    uint32_t n_frag;
    char frag_col[REPORT_MAX_FRAG][48];
    double *ts_frag[REPORT_MAX_FRAG];
    /* run.json */
    char inputs[REPORT_MAX_INPUTS][3][512]; /* role, path, "N bytes, CRC-32 X" */
    uint32_t n_inputs, n_inputs_more;       /* listed, and left out beyond the maximum */
    double events;
    bool tenant_rows_changed; /* tenants.csv has a tenant's row only when its figures changed
                                 (run.json's "tenant_rows" is "changed") */
} report_run;

/* A policy and its runs (its seeds), in the order the policies were given. */
typedef struct report_group {
    const char *policy;
    uint32_t color;           /* index into the palette */
    size_t *runs;             /* indices of its runs (ok or not) */
    size_t n_runs, n_ok;
    double mean[RM_COUNT], sd[RM_COUNT], ci[RM_COUNT]; /* over ok runs; ci = half-width */
} report_group;

typedef struct report {
    report_run *runs;
    size_t n_runs;
    report_group *groups;
    size_t n_groups;
    sim_intern *tenants;      /* tenant names across all runs; id 0 = "" */
    bool has_tenants;         /* some run has a tenant with a non-empty name */
} report;

/* One colour per policy: policy g (in the order given) uses report_palette[g]. */
extern const char *const report_palette[REPORT_MAX_POLICIES];

/* A display unit for durations: its name and its length in seconds. */
typedef struct report_unit {
    const char *name;
    double s;
} report_unit;

/* s, min, h or d: the unit for durations whose largest value is max_s seconds (s below
 * 2 min, min below 2 h, h below 3 days). */
report_unit report__unit_for(double max_s);

/* The tenants named in completed runs (id 0, "", excluded), in decreasing order of
 * their GPU-hours summed over those runs, ties by name. ids must have room for
 * sim_intern_count(r->tenants) entries. Returns the count, or -1 when out of memory. */
long report__rank_tenants(const report *r, uint32_t *ids);

/* Read run->spec.dir into run; on failure run->ok is false and run->error says why
 * (file:line:column for bad content). Never prints. Returns SIM_ENOMEM only for
 * allocation failure; unreadable outputs are not an error of the report. */
int report__load_run(report *r, report_run *run);
void report__free_run(report_run *run);

/* Figures: draw every figure of the groups into out_dir/figures/. Fills `drawn` with
 * the base names drawn ("jct_cdf") and their captions, up to max. */
typedef struct report_figure {
    char base[32];
    char caption[256];
} report_figure;
int report__draw_figures(const report *r, const char *out_dir, unsigned jobs,
                         report_figure *drawn, size_t max, report_outcome *o, sim_diag *d);

/* The files of one gnuplot figure: final paths (data, variables and gnuplot's log in the
 * data directory, PNG and SVG in the figure directory) and the scratch files gnuplot
 * reads and writes instead (".<base>.<pid>.<ext>" beside each), copied to the final
 * paths through sim_outfile once gnuplot is done: a symlink keeps its link, a FIFO or
 * device is written through (gnuplot never reads it back), a directory is refused. */
enum { REPORT_F_DAT, REPORT_F_VARS, REPORT_F_LOG, REPORT_F_PNG, REPORT_F_SVG, REPORT_F_N };
typedef struct report_gpfig {
    char final[REPORT_F_N][1300];
    char scratch[REPORT_F_N][1400];
    char s_outbase[1400]; /* gnuplot writes s_outbase.png and .svg */
    char expr[3100];      /* -e: datafile and outbase pointed at the scratch files */
    char *argv[6];
    bool tracked;
} report_gpfig;
/* Name the files and list the scratch ones for removal on a signal (before any exists). */
void report__gpfig_paths(report_gpfig *f, const char *fdir, const char *ddir, const char *base);
/* A new scratch file k (REPORT_F_DAT or REPORT_F_VARS) to write; NULL with errno. */
FILE *report__gpfig_create(report_gpfig *f, int k);
/* gnuplot's command line in f->argv: the scratch variables, the scratch data and
 * images (-e), then script (borrowed). The variables file names the final paths. */
void report__gpfig_command(report_gpfig *f, const char *script);
/* After gnuplot ended with exit_status: *drawn when both images are there; the data,
 * variables and log are copied into place, the images only when drawn (else old ones
 * are removed when regular files); last = the log's last line. Errors: SIM_EIO naming the
 * final path. */
int report__gpfig_install(report_gpfig *f, int exit_status, bool *drawn, char *last,
                          size_t last_size, sim_diag *d);
/* Remove the scratch files and stop listing them (safe twice). */
void report__gpfig_done(report_gpfig *f);
/* Remove path when it is a regular file (a figure left by an earlier report); a
 * symlink, FIFO or device there stays. */
void report__remove_stale(const char *path);

/* Markdown + HTML writer: every call writes both files. Text is plain; a span between
 * backquotes is code. */
typedef struct report_doc {
    FILE *md, *html;
    uint32_t cols;            /* columns of the open table */
    bool in_list;             /* a bullet list is open */
    char align[REPORT_MAX_COLS + 1]; /* 'l' or 'r' per column of the open table */
} report_doc;
void report__doc_begin(report_doc *doc, const char *title);
void report__doc_end(report_doc *doc);
void report__doc_heading(report_doc *doc, int level, const char *text);
void report__doc_para(report_doc *doc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void report__doc_item(report_doc *doc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void report__doc_list_end(report_doc *doc);
/* A table: header cells, then rows; align[i] is 'l' or 'r'. */
void report__doc_table(report_doc *doc, uint32_t cols, const char *const *head, const char *align);
void report__doc_row(report_doc *doc, const char *const *cells);
void report__doc_table_end(report_doc *doc);
/* A figure: png embedded in the HTML as base64 (read from png_path), referenced by
 * its relative path in the Markdown. */
void report__doc_figure(report_doc *doc, const char *png_path, const char *rel_png,
                        const char *rel_svg, const char *caption);

#endif
