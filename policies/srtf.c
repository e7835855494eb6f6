/*
 * srtf.c: preemptive shortest-remaining-first with oracle durations, the classics that
 * the Tiresias and Muri simulators ship (github.com/Rivendile/Muri, simulator/run_sim.py,
 * shortest_first_sim_jobs: `shortest` and `shortest-gpu`). srtf orders the jobs in the
 * system by their remaining reference work (seconds, the trace's duration less what is
 * done), srsf by their remaining service (that times the GPUs they hold, GPUs x share),
 * shortest first, ties by arrival. At each arrival and departure the jobs are admitted
 * in that order while their GPU request fits, the others preempted (policies/preempt.c).
 * A running job's key only falls while it runs and a waiting one's stays, so the order
 * changes only at arrivals and departures: no other wakeups are needed. A running job's
 * key falls at its speed (times its GPUs for srsf): that drift keeps the jobs of equal
 * drift in order, so no pass re-keys them (preempt.h, lanes).
 */
#include "policies/preempt.h"

typedef struct srtf_state {
    preempt_sched sched; /* first: the engine's hooks take the state */
    bool service;        /* srsf: remaining work x GPUs */
} srtf_state;

static const policy_option srtf_options[] = {
    {"checkpoint", "true", "a preempted job keeps its work (false: it loses its run segment)"},
    {NULL, NULL, NULL},
};

static void srtf_key(void *ctx, const sim_view *v, preempt_entry *x, sim_time now)
{
    (void)now;
    const srtf_state *s = ctx;
    double left = sim_view_work_left(v, x->id);
    if (s->service)
        left *= (double)x->need / SIM_MILLI_GPU;
    x->key = (preempt_key){left > 0 ? left : 0, 0, x->seq};
}

/* The work left falls at the job's speed (reference seconds per second). */
static double srtf_drift(const void *ctx, const sim_view *v, const preempt_entry *x)
{
    const srtf_state *s = ctx;
    double speed = sim_view_job(v, x->id)->speed;
    return s->service ? speed * ((double)x->need / SIM_MILLI_GPU) : speed;
}

static const preempt_hooks srtf_hooks = {.key = srtf_key, .drift = srtf_drift};

static int init_common(srtf_state *s, const policy_config *cfg, bool service, sim_diag *d)
{
    bool checkpoint;
    int rc = policy_config_bool(cfg, srtf_options, "checkpoint", &checkpoint, d);
    if (rc != SIM_OK)
        return rc;
    s->service = service;
    return preempt_init(&s->sched, cfg, &srtf_hooks, s, checkpoint, d);
}

static int srtf_init(void *st, const policy_config *cfg, sim_diag *d)
{
    return init_common(st, cfg, false, d);
}

static int srsf_init(void *st, const policy_config *cfg, sim_diag *d)
{
    return init_common(st, cfg, true, d);
}

static void srtf_fini(void *st)
{
    srtf_state *s = st;
    preempt_fini(&s->sched);
}

const policy_ops policy_srtf = {
    .abi_version = POLICY_ABI_VERSION,
    .name = "srtf",
    .summary = "preemptive shortest remaining time first (oracle durations), admission by "
               "GPU request, most-allocated node and GPUs",
    .state_size = sizeof(srtf_state),
    .job_state_size = sizeof(preempt_entry),
    .options = srtf_options,
    .init = srtf_init,
    .fini = srtf_fini,
    .on_arrival = preempt_on_arrival,
    .on_finish = preempt_on_finish,
    .on_requeue = preempt_on_requeue,
    .schedule = preempt_schedule,
    .next_wakeup = preempt_next_wakeup,
};

const policy_ops policy_srsf = {
    .abi_version = POLICY_ABI_VERSION,
    .name = "srsf",
    .summary = "preemptive shortest remaining service first (remaining time x GPUs, oracle "
               "durations), admission by GPU request, most-allocated node and GPUs",
    .state_size = sizeof(srtf_state),
    .job_state_size = sizeof(preempt_entry),
    .options = srtf_options,
    .init = srsf_init,
    .fini = srtf_fini,
    .on_arrival = preempt_on_arrival,
    .on_finish = preempt_on_finish,
    .on_requeue = preempt_on_requeue,
    .schedule = preempt_schedule,
    .next_wakeup = preempt_next_wakeup,
};
