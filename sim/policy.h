/*
 * policy.h: the scheduling-policy plugin interface.
 *
 * A policy is a const table of function pointers plus the size of its state, which
 * the core allocates zeroed. Policies read the const view (sim/view.h) and take
 * decisions through the sim_decide_* calls, which the core validates and applies.
 * schedule() is called once after each batch of same-time events that changed
 * something, never per event; it must not allocate (scratch lives in the state,
 * sized in init). Randomness comes only from v->rng. Tuning knobs are declared in
 * `options` and read from the policy_config; an unknown key is an error before init.
 * Fields are only ever appended to this table (POLICY_ABI_VERSION). The core defines
 * this interface and reads the options (sim/policy_config.c); the policies and their
 * registry are in policies/ (policies/registry.h).
 */
#ifndef SIM_POLICY_H
#define SIM_POLICY_H

#include "sim/view.h"

#define POLICY_ABI_VERSION 1

/* A tuning knob: name, default value (as text) and one line of help. */
typedef struct policy_option {
    const char *name;
    const char *default_value;
    const char *help;
} policy_option;

#define POLICY_MAX_OPTIONS 32

/* Options as given (key=value), validated against policy_ops.options. */
typedef struct policy_config {
    const char *policy;  /* policy name, for messages */
    uint32_t n;
    char key[POLICY_MAX_OPTIONS][48];      /* option names (copied) */
    const char *value[POLICY_MAX_OPTIONS]; /* values (borrowed; must outlive init) */
    /* Facts about the run a policy may size itself from. */
    uint32_t n_nodes, n_gpus, n_gpu_types;
    uint32_t n_node_gpu_types;  /* distinct GPU types of the nodes with GPUs */
    uint32_t max_gpus_per_node; /* 0 when unknown */
    uint64_t seed;
    /* The run's target workload (task shapes and their popularity, policies/frag.h) for
     * fragmentation-aware policies; NULL when the caller built none. Borrowed: it
     * outlives the policy, and it may grow during the run (see its version). */
    const struct frag_workload *workload;
    /* Names of the model classes the trace reader interns (job_spec.model); NULL when
     * the caller has none. Borrowed: it outlives the policy and grows as jobs are read. */
    const struct sim_intern *models;
} policy_config;

typedef struct policy_ops {
    int abi_version;       /* POLICY_ABI_VERSION */
    const char *name;      /* unique: "fifo", "binpack", ... */
    const char *summary;   /* one line for `clustersim policies` */
    size_t state_size;     /* bytes of policy state, allocated zeroed by the core */
    size_t job_state_size; /* bytes of per-job state (sim_view_job_state), zeroed at arrival */
    const policy_option *options; /* NULL-name-terminated, or NULL */
    uint64_t needs_attrs;  /* bit a: every job must carry attribute a (sim_attr) */
    bool needs_workload;   /* reads cfg->workload, the run's target workload */

    int (*init)(void *st, const policy_config *cfg, sim_diag *diag);
    void (*fini)(void *st); /* optional */

    /* Bookkeeping hooks (optional): update policy state only. */
    void (*on_arrival)(void *st, const sim_view *v, sim_job_id job);
    void (*on_finish)(void *st, const sim_view *v, sim_job_id job);
    /* The core returned the job to the pending list on its own (its node failed). A
     * policy's own preemptions (sim_decide_preempt) do not call this hook. */
    void (*on_requeue)(void *st, const sim_view *v, sim_job_id job);

    /* Take decisions. Returns SIM_OK or an error (which ends the run). */
    int (*schedule)(void *st, const sim_view *v, sim_time now, policy_decisions *out);

    /* Next self-wakeup (a quantum, a monitor period), or SIM_TIME_NEVER. Optional. */
    sim_time (*next_wakeup)(const void *st, const sim_view *v, sim_time now);

    /* One more jobs.csv column that the policy fills (optional, both or neither): its
     * header name, and a job's value from its spec ("" for none; a string that stays
     * valid until the next call). Runs of other policies keep the core's columns only. */
    const char *job_column;
    const char *(*job_value)(const void *st, const job_spec *spec);
    /* The policy scales elastic jobs: the run's outputs carry the replica columns and
     * the elastic figures (sim_config.elastic_outputs). It starts an elastic job at
     * min_replicas or more, so admission asks only that min_replicas of its replicas fit;
     * under other policies, which start a job at its nominal count, that count must. */
    bool elastic_outputs;
    /* The policy places no master or parameter servers (sim_job.n_roles): the core
     * rejects the jobs that have them as they arrive, with the reason. */
    bool no_roles;
    /* Names of the options whose value is a file the policy writes (NULL-terminated, or
     * NULL for none). The run refuses one that names an input of the run or another of
     * its outputs, before anything is written; every other option whose value names an
     * existing file is one of the run's inputs. */
    const char *const *output_options;
} policy_ops;

/* Option lookup: the value given for key, else the declared default (NULL when the
 * policy declares no such option). */
const char *policy_config_get(const policy_config *cfg, const policy_option *opts,
                              const char *key);
/* Typed getters: parse the value of key (given or default) into *out. On a bad value
 * they fill diag ("policy 'las': option 'quantum': expected ..., got "x"") and return
 * SIM_EINVAL. */
int policy_config_double(const policy_config *cfg, const policy_option *opts, const char *key,
                         double min, double max, double *out, sim_diag *diag);
int policy_config_u64(const policy_config *cfg, const policy_option *opts, const char *key,
                      uint64_t min, uint64_t max, uint64_t *out, sim_diag *diag);
int policy_config_bool(const policy_config *cfg, const policy_option *opts, const char *key,
                       bool *out, sim_diag *diag);
/* One of `choices` (NULL-terminated); *out is its index. */
int policy_config_choice(const policy_config *cfg, const policy_option *opts, const char *key,
                         const char *const *choices, int *out, sim_diag *diag);

/* Check that every key in cfg is declared in opts (otherwise SIM_EINVAL with a message
 * listing the known options), has a non-empty value, and is given once. */
int policy_config_validate(const policy_config *cfg, const policy_option *opts, sim_diag *diag);

#endif
