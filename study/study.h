/*
 * study.h: the library under the command line — what a program calls to run the
 * simulator and study its results without going through argument parsing:
 *   - run this configuration: study_run (run_args -> run_result and the run's files);
 *   - compare these runs: study_compare (several policies and seeds, each a child run,
 *     then the report);
 *   - write this report: report_write (study/report.h) from finished runs' outputs;
 *   - the fragmentation study of `pack` (study/pack.h) and parameter sweeps
 *     (study/sweep.h).
 * Functions return a status code (base/types.h) and fill a sim_diag on error.
 */
#ifndef STUDY_STUDY_H
#define STUDY_STUDY_H

#include "models/catalog.h"
#include "models/rate.h"
#include "sim/policy.h"
#include "sim/engine.h"
#include "sim/types.h"
#include "study/files.h"
#include "study/report.h"
#include "traces/gen.h"
#include "traces/trace.h"

#define STUDY_VERSION "0.1.0"

/* One simulation run, as `clustersim run` describes it. */
typedef struct run_args {
    const char *trace;                      /* path, or NULL with gen set */
    const char *format;                     /* trace format (NULL = native) */
    const char *trace_opts[TRACE_MAX_OPTS]; /* format-specific KEY=VALUE options */
    uint32_t n_trace_opts;
    const trace_gen_config *gen;  /* synthetic source instead of a trace file */
    const char *cluster;          /* file or compact string */
    const char *cluster_gpu_type; /* type of cluster specs that name none (NULL = V100M16) */
    const char *catalog;          /* NULL = shipped */
    const char *policy;
    policy_config pcfg;
    uint64_t seed;
    const char *out_dir; /* NULL = no files */
    double sample_interval_s;
    double horizon_s; /* 0 = none */
    double checkpoint_s, restart_penalty_s, mtbf_s, mttr_s;
    uint64_t stall_limit;    /* sim_config.stall_limit (run_args_default: 1,000,000) */
    const char *failures;    /* CSV node,down_s,up_s */
    const char *quotas;      /* CSV tenant,quota_gpus (NULL = none) */
    const char *quota_share; /* FILE[:COLUMN]: quotas in proportion to a weight column */
    bool skip_bad_rows;
    bool check_invariants;    /* verify the cluster's accounting after every event */
    bool prefetch;            /* read the trace on a second thread (run_args_default: true) */
    bool check_only;          /* open and check every input, initialise the policy, stop */
    bool frag_arrivals;       /* the fragmentation workload of the columns and of the policy
                                 from the jobs read so far (always so for standard input) */
    bool frag_trace;          /* both from a first pass over the trace; neither flag: the
                                 columns' from the jobs read so far, the policy's (fgd)
                                 from a first pass */
    bool tenant_rows_changed; /* tenants.csv rows only when a tenant's figures changed */
    bool frag_probe;          /* the frag_gpus and frag_ratio columns (run_args_default:
                                 true); without them, and with a policy that does not need
                                 the workload, no workload is built and the trace is read
                                 once */
    bool progress;            /* live line on stderr */
    const char *throughput;   /* "measured" (NULL), "none", or steps tables FILE[,FILE] */
    const char *interference; /* "none" (NULL), "measured", "model", or a contention FILE */
    const char *ref_gpu_type; /* reference type of jobs without one ("job"/NULL: none) */
    int argc;
    char **argv; /* the command, for run.json */
    /* --zoo: jobs without features get synthetic ones from the model zoo (seeded by
     * seed), and the zoo gives every zoo job its true speed and demand per GPU type. */
    bool zoo;
    const char *zoo_ref; /* GPU type work_s is measured on (NULL = V100M16) */
    double zoo_over;     /* mean over-request of annotated jobs (>= 1) */
    double zoo_slo;      /* LS target of annotated jobs: factor x work_s (0 = none) */
    /* Elastic scaling curve of jobs run at other than their nominal replica count:
     * Pollux's profiles for the pollux format's applications, else Amdahl's law with
     * this parallel fraction (NaN = not set: the core's replicas/nominal, unless the
     * trace is in the pollux format, which uses 0.95). */
    double amdahl;
    const char *demand;          /* demand curves of online services: CSV service,time,replicas */
    const char *pollux_profiles; /* Pollux profiles for the scaling of any trace's jobs */
} run_args;

typedef struct run_result {
    sim_summary sum;
    double wall_s;
    uint64_t rows_skipped;
    uint64_t rows_ignored;   /* records the format documents as not being jobs */
    uint32_t trace_passes;   /* first passes over the trace file before the run (0 or 1) */
    char summary_json[4096]; /* first part of summary.json, for printing (may be cut) */
    char notes[1024];        /* warnings about likely mistakes in the inputs, one per line */
} run_result;

void run_args_default(run_args *a);

/* Build the GPU models the run options ask for (*out stays NULL when both are off).
 * Errors of the model tables or an unknown --ref-gpu-type, with d filled. */
int study_rate_setup(const run_args *a, const model_catalog *cat, const sim_intern *classes,
                     model_rate **out, sim_diag *d);
/* Run one simulation; on error d is filled and the status returned. */
int study_run(const run_args *a, run_result *res, sim_diag *d);

/* A comparison: every policy once per seed, each a child `clustersim run` (self) with
 * the common options, at most jobs at once; outputs under out/runs/, then the report
 * (report_write) in out. */
typedef struct compare_config {
    const char *self;            /* this executable, run as the child processes */
    const char *trace, *format;  /* a file (read once per run); format NULL = native */
    const char *cluster;         /* node-list file or compact spec */
    const char *catalog;         /* NULL = the shipped one */
    const char *out;             /* report and runs/ go here */
    const char *const *policies; /* registered names, each once; the first is the baseline */
    size_t n_policies;
    const char *const *policy_opts; /* --policy-opt values */
    size_t n_policy_opts;
    const bool *policy_opt_applies; /* [p * n_policy_opts + q]: option q goes to policy p */
    const char *const *pass;        /* further run options, passed on as given */
    size_t n_pass;
    const uint64_t *seeds;
    size_t n_seeds;
    const char *seeds_text; /* as given, for the report (NULL = one seed) */
    unsigned jobs;          /* runs at once */
    bool figures;           /* draw the report's figures (gnuplot) */
    bool quiet;             /* no progress display on stderr */
    int argc;               /* the command, for the report */
    char **argv;
} compare_config;

/* Run the comparison and write its report; progress, failed runs and the report's
 * paths are printed. Returns the process exit status: 0 every run completed, 1 some run
 * failed (the report is still written and says why), 2 bad input or files. */
int study_compare(const compare_config *c);

#endif
