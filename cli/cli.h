/*
 * cli.h: the command-line layer — the only place that wires traces, models, policies
 * and the engine together. Each subcommand is a function in its own cmd_*.c file,
 * listed in main.c. Commands return the process exit status: 0 success, 1 the run
 * failed (a policy's invalid decision or error, out of memory), 2 bad input, usage, or
 * a file that cannot be read or written.
 */
#ifndef CLI_CLI_H
#define CLI_CLI_H

#include "policies/frag.h"
#include "models/catalog.h"
#include "models/rate.h"
#include "policies/policy.h"
#include "sim/outfile.h"
#include "sim/engine.h"
#include "sim/types.h"
#include "traces/gen.h"
#include "traces/trace.h"

#include <stdio.h>

#define CLI_VERSION "0.1.0"

/* Exit status for an error status code: 1 when the run failed (SIM_EPOLICY, SIM_ENOMEM),
 * 2 for bad input, options or files (every other code). */
int cli_exit_code(int status);
/* Print "clustersim: file:line:col: error: msg" to stderr; nothing for a diag with an
 * empty message (the error was printed where it happened). */
void cli_print_diag(const sim_diag *d);
/* Print "clustersim: error: <fmt>" to stderr; returns 2. */
int cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Match argv[*i] against "--name value" / "--name=value". 1 = matched (value in *val,
 * *i advanced past it), 0 = not this option, -1 = the value is missing (printed). */
int cli_opt(int argc, char **argv, int *i, const char *name, const char **val);
/* Match a flag without value. */
bool cli_flag(char **argv, int i, const char *name);
/* Parse numbers of an option; print a clear error and return false when invalid. */
bool cli_u64(const char *opt, const char *val, uint64_t min, uint64_t max, uint64_t *out);
bool cli_double(const char *opt, const char *val, double min, double max, double *out);
/* Parse a duration ("90", "90s", "15m", "2h", "1d") in seconds. */
bool cli_seconds(const char *opt, const char *val, double *out);
/* Add "[POLICY:]KEY=VALUE" to cfg when it applies to cfg->policy (see below; always when
 * cfg->policy is NULL). Returns false with a printed error. */
/* Parse --seeds "A..B" or "A,B,..." (each seed once, at most max) into seeds. Returns the
 * count, or 0 after printing the error. */
size_t cli_seeds(const char *s, uint64_t *seeds, size_t max);
bool cli_policy_opt(policy_config *cfg, const char *val);
/* Whether "[POLICY:]KEY=VALUE" is meant for policy: its prefix names it, or it has no
 * prefix and the policy declares KEY. */
bool cli_policy_opt_applies(const char *val, const char *policy);
/* Check --policy-opt values against the policies a command runs: a prefix must name one
 * of them, the key must be an option of that policy, and an unprefixed key an option of
 * at least one. Prints the error and returns false otherwise. */
bool cli_check_policy_opts(const char *const *opts, size_t n_opts, const char *const *policies,
                           size_t n_policies);

/* The path of this executable (to run it as a child process) into buf; false after
 * printing why when it cannot be found. */
bool cli_self_exe(char *buf, size_t size, const char *argv0);

/* Append a --trace-opt value to opts (at most TRACE_MAX_OPTS); false when printed. */
bool cli_trace_opt(const char **opts, uint32_t *n, const char *val);

/* Create directory `dir` and its parents; false with a printed error. */
bool cli_mkdirs(const char *dir);

/* An output file (sim/outfile.h: a temporary renamed on commit; FIFOs and devices
 * written through; symlinks followed). */
typedef struct cli_outfile {
    FILE *f;
    sim_outfile o;
} cli_outfile;
/* Open DIR/NAME under a temporary name; false (printed) when it cannot be created. A
 * caller reports that as bad input: exit status cli_exit_code(SIM_EIO), i.e. 2. */
bool cli_out_open(cli_outfile *o, const char *dir, const char *name);
/* The same for a path (its directory part, else the current directory). */
bool cli_out_open_path(cli_outfile *o, const char *path);
/* Close; rename into place when commit, else remove. false (printed: the path and the
 * system's reason) on error. */
bool cli_out_close(cli_outfile *o, bool commit);

/* Remove the temporary outputs and end by the default action when SIGINT, SIGTERM or
 * SIGHUP arrive (a signal the caller ignores, as under nohup, stays ignored). */
void cli_cleanup_on_signals(void);

/* CRC-32 and size of a file, for run.json. false when it cannot be read. */
bool cli_file_crc(const char *path, uint32_t *crc, uint64_t *bytes);

/* One simulation run, as `clustersim run` describes it. */
typedef struct run_args {
    const char *trace;   /* path, or NULL with gen set */
    const char *format;  /* trace format (NULL = native) */
    const char *trace_opts[TRACE_MAX_OPTS]; /* format-specific KEY=VALUE options */
    uint32_t n_trace_opts;
    const trace_gen_config *gen; /* synthetic source instead of a trace file */
    const char *cluster; /* file or compact string */
    const char *cluster_gpu_type; /* type of cluster specs that name none (NULL = V100M16) */
    const char *catalog; /* NULL = shipped */
    const char *policy;
    policy_config pcfg;
    uint64_t seed;
    const char *out_dir; /* NULL = no files */
    double sample_interval_s;
    double horizon_s;    /* 0 = none */
    double checkpoint_s, restart_penalty_s, mtbf_s, mttr_s;
    const char *failures; /* CSV node,down_s,up_s */
    const char *quotas;      /* CSV tenant,quota_gpus (NULL = none) */
    const char *quota_share; /* FILE[:COLUMN]: quotas in proportion to a weight column */
    bool skip_bad_rows;
    bool check_invariants; /* verify the cluster's accounting after every event */
    bool prefetch;       /* read the trace on a second thread (run_args_default: true) */
    bool check_only;     /* open and check every input, initialise the policy, stop */
    bool frag_arrivals;  /* fragmentation workload from the jobs read so far, not a first
                            pass over the trace (always so for standard input) */
    bool progress;       /* live line on stderr */
    const char *throughput;   /* "measured" (NULL), "none", or steps tables FILE[,FILE] */
    const char *interference; /* "none" (NULL), "measured", "model", or a contention FILE */
    const char *ref_gpu_type; /* reference type of jobs without one ("job"/NULL: none) */
    int argc;
    char **argv;         /* the command, for run.json */
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
    uint64_t rows_ignored; /* records the format documents as not being jobs */
    char summary_json[4096]; /* first part of summary.json, for printing (may be cut) */
    char notes[1024];        /* warnings about likely mistakes in the inputs, one per line */
} run_result;

void run_args_default(run_args *a);

/* Build the GPU models the run options ask for (*out stays NULL when both are off).
 * Errors of the model tables or an unknown --ref-gpu-type, with d filled. */
int cli_rate_setup(const run_args *a, const model_catalog *cat, const sim_intern *classes,
                   model_rate **out, sim_diag *d);
/* Run one simulation; on error d is filled and the status returned. */
int cli_run_sim(const run_args *a, run_result *res, sim_diag *d);

/* The target workload of a run and its fragmentation probe (cli/fragmentation.c):
 * columns frag_gpus (GPUs no task drawn from the workload could use, summed over up
 * nodes) and frag_ratio (frag_gpus / idle GPUs). The probe's ctx is the struct itself,
 * so it must stay where cli_frag_init put it. */
#define CLI_FRAG_CACHE 64
typedef struct cli_frag {
    frag_workload *wl;
    frag_meter *meter;
    sim_probe probe;
    const cluster_spec *cl;    /* borrowed */
    const uint64_t *type_mem;  /* memory per GPU type id, MiB (borrowed) */
    bool cache_used[CLI_FRAG_CACHE]; /* largest eligible node per (types, GPU memory) */
    uint64_t cache_mask[CLI_FRAG_CACHE], cache_gmem[CLI_FRAG_CACHE];
    uint32_t cache_gpus[CLI_FRAG_CACHE];
} cli_frag;

/* An empty workload and a meter for cluster cl. SIM_OK, SIM_ENOMEM or SIM_ELIMIT. */
int cli_frag_init(cli_frag *f, const cluster_spec *cl, const uint64_t *type_mem,
                  uint32_t n_types, sim_diag *d);
void cli_frag_fini(cli_frag *f);
/* Count one job's replica shape (replicas resolved as the engine's admission does). */
int cli_frag_add_job(cli_frag *f, const job_spec *j, sim_diag *d);
/* First pass: count every job of a's trace file (or generator). Errors of the trace. */
int cli_frag_scan(cli_frag *f, const run_args *a, sim_intern *tenants, sim_intern *models,
                  const sim_intern *gpu_types, sim_diag *d);

int cmd_run(int argc, char **argv);
int cmd_demo(int argc, char **argv);
int cmd_policies(int argc, char **argv);
int cmd_trace(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_plot(int argc, char **argv);
int cmd_pack(int argc, char **argv);
int cmd_sweep(int argc, char **argv);
int cmd_model(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);
/* `clustersim model` handlers of the demand predictors (cmd_predict.c); each receives the
 * options after VERB and KIND. */
int cmd_model_gen_samples(int argc, char **argv);
int cmd_model_train_util(int argc, char **argv);
int cmd_model_train_mem(int argc, char **argv);
int cmd_model_train_time(int argc, char **argv);
int cmd_model_eval_util(int argc, char **argv);
int cmd_model_eval_mem(int argc, char **argv);
int cmd_model_eval_time(int argc, char **argv);
/* `clustersim model eval duration`: options in argv[0..argc). */
int cli_model_eval_duration(int argc, char **argv);

#endif
