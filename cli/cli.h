/*
 * cli.h: the command-line layer — argument parsing, help text and exit codes. Each
 * subcommand is a function in its own cmd_*.c file, listed in main.c; it maps its
 * options to a configuration and calls the library (study/study.h). Commands return the process
 * exit status: 0 success, 1 the run failed (a policy's invalid decision or error, out of memory), 2
 * bad input, usage, or a file that cannot be read or written.
 */
#ifndef CLI_CLI_H
#define CLI_CLI_H

#include "sim/policy.h"
#include "study/study.h"

#include <stdio.h>

#define CLI_VERSION STUDY_VERSION

/* Exit status for an error status code: 1 when the run failed (SIM_EPOLICY, SIM_ENOMEM),
 * 2 for bad input, options or files (every other code). */
int cli_exit_code(int status);
/* Print "clustersim: file:line:col: error: msg" to stderr; nothing for a diag with an
 * empty message (the error was printed where it happened). */
void cli_print_diag(const sim_diag *d);
/* Print d (an empty out-of-memory diagnostic gets its message) and return the exit
 * status for st. */
int cli_fail(int st, sim_diag *d);
/* Print "clustersim: error: <fmt>" to stderr; returns 2. */
int cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Match argv[*i] against "--name value" / "--name=value". 1 = matched (value in *val,
 * *i advanced past it), 0 = not this option, -1 = the value is missing (printed). */
int cli_opt(int argc, char **argv, int *i, const char *name, const char **val);
/* Options that take a string: each name's value is stored through its dst. */
typedef struct cli_str_opt {
    const char *name;
    const char **dst;
} cli_str_opt;
/* cli_opt over a table ended by {NULL, NULL}: 1 = one was consumed, 0 = argv[*i] is none
 * of them, -1 = error (printed). */
int cli_str_opts(int argc, char **argv, int *i, const cli_str_opt *opts);
/* Match a flag without value. */
bool cli_flag(char **argv, int i, const char *name);
/* Parse numbers of an option; print a clear error and return false when invalid. */
bool cli_u64(const char *opt, const char *val, uint64_t min, uint64_t max, uint64_t *out);
bool cli_double(const char *opt, const char *val, double min, double max, double *out);
/* Parse a duration ("90", "90s", "15m", "2h", "1d") in seconds. */
bool cli_seconds(const char *opt, const char *val, double *out);
/* A directory to write into given to option `opt`: false (the error printed) when it is
 * empty, which would put the outputs under the root directory. */
bool cli_out_dir(const char *opt, const char *val);
/* Add "[POLICY:]KEY=VALUE" to cfg when it applies to cfg->policy (see below; always when
 * cfg->policy is NULL). Returns false with a printed error. */
/* Parse --seeds "A..B" or "A,B,..." (each seed once, at most max) into seeds. Returns the
 * count, or 0 after printing the error. */
size_t cli_seeds(const char *s, uint64_t *seeds, size_t max);
bool cli_policy_opt(policy_config *cfg, const char *val);
/* Whether "[POLICY:]KEY=VALUE" is meant for policy: its prefix names it, or it has no
 * prefix and the policy declares KEY. */
/* Split "[POLICY:]KEY=VALUE": the policy prefix (len 0 when absent) and the key. */
void cli_policy_opt_split(const char *val, const char **pol, size_t *pol_len, const char **key,
                          size_t *key_len);
bool cli_policy_opt_applies(const char *val, const char *policy);
/* Check --policy-opt values against the policies a command runs: a prefix must name one
 * of them, the key must be an option of that policy, and an unprefixed key an option of
 * at least one. Prints the error and returns false otherwise. */
bool cli_check_policy_opts(const char *const *opts, size_t n_opts, const char *const *policies,
                           size_t n_policies);

/* Append a --trace-opt value to opts (at most TRACE_MAX_OPTS); false when printed. */
bool cli_trace_opt(const char **opts, uint32_t *n, const char *val);

/* Remove the temporary outputs and end by the default action when SIGINT, SIGTERM or
 * SIGHUP arrive (a signal the caller ignores, as under nohup, stays ignored). */
void cli_cleanup_on_signals(void);

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
