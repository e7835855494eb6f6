/*
 * antman.c: AntMan-style opportunistic packing (Xiao et al., "AntMan: Dynamic Scaling on
 * GPU Clusters for Deep Learning", OSDI'20) as the Muri simulator runs it
 * (github.com/Rivendile/Muri, simulator/run_sim.py antman_sim_jobs,
 * antman_calc_iter_time; switch.py antman_alloc_res). Each job is resource-guaranteed
 * or opportunistic (the trace's priority: 0 guaranteed, otherwise opportunistic; or, with
 * priority=random, a fair coin from the run's RNG, as the simulator draws it when the
 * trace has none). A GPU hosts at most one job of each kind, so at most two jobs, and
 * only while its memory holds what they ask (gpu_mem_mib; the simulator has no memory).
 *
 * At every scheduling point the pending jobs are tried in the simulator's order
 * (guaranteed before opportunistic, then by arrival), each on its own (a job that does
 * not fit does not block those behind it); nothing is ever preempted. A guaranteed job
 * takes, for each replica, the first node (by id) with enough GPUs hosting no guaranteed
 * job, and its lowest such GPUs. An opportunistic job takes GPUs hosting no
 * opportunistic job, the least loaded first (idle GPUs before GPUs hosting a guaranteed
 * job, by index): for each replica, the first node with enough idle GPUs, else the first
 * with enough such GPUs.
 *
 * Each job holds half of each of its GPUs. A guaranteed job runs at its solo speed. An
 * opportunistic job runs at its solo iteration time over the longest of: its own
 * iteration time and, for each guaranteed job on its GPUs, the simulator's count of the
 * guaranteed job's iterations that the opportunistic job's data-loading, GPU and
 * synchronisation stages (stage_cpu_ms, stage_gpu_ms, stage_net_ms) span, times the
 * guaranteed job's iteration time (iter_time_ms). Without those profiles it runs at half
 * speed (the simulator's factor of 2 for a job beside another). The speeds are re-set at
 * every scheduling point where a co-located job started or left.
 */
#include "policies/antman.h"
#include "policies/interleave.h"
#include "sim/policy.h"

#include "base/alloc.h"
#include "base/maxtree.h"

#include <gsl/gsl_rng.h>
#include <math.h>
#include <string.h>

enum { AM_GUARANTEED = 0, AM_OPPORTUNISTIC = 1 };

/* A pending job in line in a pass: its place in the pending list, and its id. */
typedef struct am_next {
    uint64_t seq;
    sim_job_id id;
} am_next;

typedef struct antman_job {
    uint32_t first_gpu; /* first GPU it holds, UINT32_MAX when none */
    uint32_t lshape;    /* pending: its shape, and its neighbours in the list of the */
    sim_job_id lprev, lnext; /* pending jobs of that shape and its kind */
    uint8_t cls;
    bool dirty;  /* listed for a new speed */
    bool linked; /* in the list of its shape and kind */
} antman_job;

typedef struct antman_state {
    bool random; /* priority=random */
    uint32_t n_gpus;
    sim_job_id *res[2];     /* per GPU: its job of each kind, or SIM_JOB_NONE */
    uint32_t *next[2];      /* per GPU: the next GPU of the same job of that kind */
    uint32_t *nodes, *gpus; /* scratch: a placement */
    uint32_t *pick;         /* scratch: GPUs picked on one node */
    /* A placement's marks: its GPUs (gpu_stamp) and its nodes with the replicas on them
     * (node_stamp, node_here) carry the placement's stamp. */
    uint64_t stamp, *gpu_stamp, *node_stamp;
    uint32_t *node_here;
    sim_job_id *dirty;      /* opportunistic jobs whose partners changed */
    uint32_t n_dirty;
    bool overflow; /* more than the list holds: re-set every opportunistic job */
    uint32_t n_nodes;
    uint32_t *nfree[2];  /* per node: its GPUs hosting no job of each kind */
    uint32_t *tree[2];   /* max trees over those (base/maxtree.h), of `leaves` leaves */
    uint32_t leaves;
    uint32_t maxfree[2]; /* the most of those on any node */
    uint32_t *with[2];   /* per count k: the nodes with k such GPUs (k <= the most GPUs of a node) */
    sim_job_id *arr;     /* jobs arrived since the last pass */
    uint32_t n_arr, arr_cap;
    uint64_t seen_release; /* the release epoch of the last pass */
    uint64_t pass;         /* passes made */
    uint64_t *failed;      /* per shape and kind: the last pass in which it found no GPUs */
    sim_job_id *lhead, *ltail; /* per shape and kind: its pending jobs, in enqueue order */
    uint32_t shape_cap;    /* shapes those have room for */
    am_next *line;         /* scratch: per shape, its next job of a kind, by enqueue order */
    bool ready, oom;
} antman_state;

static const char *const antman_priorities[] = {"trace", "random", NULL};

static const policy_option antman_options[] = {
    {"priority", "trace",
     "trace: jobs with priority 0 are guaranteed, the others opportunistic; random: each "
     "job is opportunistic with probability 1/2 (the run's RNG)"},
    {NULL, NULL, NULL},
};

static const antman_job *am_job(const sim_view *v, sim_job_id id)
{
    return sim_view_job_state(v, id);
}

/* Room for n shapes in the per-shape tables; false when out of memory. */
static bool grow_shapes(antman_state *s, uint32_t n)
{
    if (n <= s->shape_cap)
        return true;
    uint32_t ncap = s->shape_cap ? s->shape_cap : 64;
    while (ncap < n)
        ncap *= 2;
    uint64_t *f = sim_reallocarray(s->failed, (size_t)ncap * 2, sizeof *f);
    if (f)
        s->failed = f;
    sim_job_id *h = sim_reallocarray(s->lhead, (size_t)ncap * 2, sizeof *h);
    if (h)
        s->lhead = h;
    sim_job_id *t = sim_reallocarray(s->ltail, (size_t)ncap * 2, sizeof *t);
    if (t)
        s->ltail = t;
    am_next *l = sim_reallocarray(s->line, ncap, sizeof *l);
    if (l)
        s->line = l;
    if (!f || !h || !t || !l)
        return false;
    for (size_t i = (size_t)s->shape_cap * 2; i < (size_t)ncap * 2; i++) {
        s->failed[i] = 0;
        s->lhead[i] = s->ltail[i] = SIM_JOB_NONE;
    }
    s->shape_cap = ncap;
    return true;
}

/* Pending job id joins the tail of its shape and kind's list (it just entered the
 * pending list, at its tail). */
static void link_job(antman_state *s, const sim_view *v, sim_job_id id)
{
    antman_job *x = sim_view_job_state(v, id);
    uint32_t sh = sim_view_job(v, id)->shape;
    if (x->linked)
        return;
    if (!grow_shapes(s, sh + 1)) {
        s->oom = true;
        return;
    }
    size_t k = (size_t)sh * 2 + x->cls;
    x->lshape = sh;
    x->lprev = s->ltail[k];
    x->lnext = SIM_JOB_NONE;
    if (s->ltail[k] != SIM_JOB_NONE)
        ((antman_job *)sim_view_job_state(v, s->ltail[k]))->lnext = id;
    else
        s->lhead[k] = id;
    s->ltail[k] = id;
    x->linked = true;
}

/* Job id leaves the list of its shape and kind (it started, or left the system). */
static void unlink_job(antman_state *s, const sim_view *v, sim_job_id id)
{
    antman_job *x = sim_view_job_state(v, id);
    if (!x->linked)
        return;
    size_t k = (size_t)x->lshape * 2 + x->cls;
    if (x->lprev != SIM_JOB_NONE)
        ((antman_job *)sim_view_job_state(v, x->lprev))->lnext = x->lnext;
    else
        s->lhead[k] = x->lnext;
    if (x->lnext != SIM_JOB_NONE)
        ((antman_job *)sim_view_job_state(v, x->lnext))->lprev = x->lprev;
    else
        s->ltail[k] = x->lprev;
    x->linked = false;
}

static bool hosts(const antman_state *s, uint32_t g, int cls)
{
    return s->res[cls][g] != SIM_JOB_NONE;
}

static bool idle(const antman_state *s, uint32_t g)
{
    return !hosts(s, g, 0) && !hosts(s, g, 1);
}

/* Up to k GPUs of node n usable by kind cls (idle ones only when idle_only) with the GPU
 * memory j asks free, lowest first, into s->pick, minus those already picked for this
 * job (marked with the placement's stamp). */
static uint32_t gather(antman_state *s, const sim_view *v, const sim_job *j, uint32_t n, int cls,
                       bool idle_only, uint32_t k)
{
    uint32_t c = 0;
    if (!v->node_up[n] || !sim_job_type_ok(j, v->node_gpu_type[n]))
        return 0;
    uint32_t first = v->node_gpu_first[n];
    for (uint32_t g = first; g < first + v->node_gpu_count[n] && c < k; g++) {
        if (s->gpu_stamp[g] == s->stamp || hosts(s, g, cls) || (idle_only && !idle(s, g)) ||
            sim_view_gpu_free_mem(v, g) < j->spec.gpu_mem_mib)
            continue;
        s->pick[c++] = g;
    }
    return c;
}

/* Whether node n has CPU and memory for one more replica of j, beside the r replicas of
 * this placement already there. */
static bool host_fits(const sim_view *v, const sim_job *j, uint32_t n, uint32_t r)
{
    uint64_t k = (uint64_t)r + 1;
    return v->node_cpu_total[n] - v->node_cpu_used[n] >= k * j->cpu_per_replica &&
           v->node_mem_total[n] - v->node_mem_used[n] >= k * j->mem_per_replica;
}

static bool fast_fit = true;

void antman_fast_fit_enable(bool on)
{
    fast_fit = on;
}

/* The first node from `from` on with at least k GPUs hosting no job of kind cls, idle or
 * not; UINT32_MAX when none. */
static uint32_t next_node(const antman_state *s, int cls, uint32_t from, uint32_t k)
{
    if (fast_fit)
        return maxtree_first(s->tree[cls], s->leaves, from, k);
    for (uint32_t n = from; n < s->n_nodes; n++)
        if (s->nfree[cls][n] >= k)
            return n;
    return UINT32_MAX;
}

/* Place every replica of j as kind cls; false when some replica finds no node. */
static bool place(antman_state *s, const sim_view *v, const sim_job *j, int cls, sim_placement *pl)
{
    uint32_t gpr = j->gpus_per_replica, reps = j->nominal_replicas;
    if ((uint64_t)gpr * reps > s->n_gpus || reps > s->n_gpus)
        return false;
    /* Where the last replica's search stopped: each replica takes the first (round,
     * node) that fits, and the replicas placed before only take room, so none before
     * that point fits the next one either. */
    int from_round = cls == AM_OPPORTUNISTIC ? 0 : 1;
    uint32_t from_node = 0;
    s->stamp++; /* marks the GPUs and nodes this job's replicas take */
    for (uint32_t r = 0; r < reps; r++) {
        bool done = false;
        if (!fast_fit) { /* every replica's search from the first node */
            from_round = cls == AM_OPPORTUNISTIC ? 0 : 1;
            from_node = 0;
        }
        /* Opportunistic: idle GPUs first (pass 0), then those hosting a guaranteed job;
         * in each, the nodes with at least gpr GPUs free of this kind, idle or not. */
        for (int round = from_round; round < 2 && !done; round++)
            for (uint32_t n = next_node(s, cls, round == from_round ? from_node : 0, gpr);
                 n < v->n_nodes && !done; n = next_node(s, cls, n + 1, gpr)) {
                uint32_t here = s->node_stamp[n] == s->stamp ? s->node_here[n] : 0;
                if (!host_fits(v, j, n, here) || gather(s, v, j, n, cls, round == 0, gpr) < gpr)
                    continue;
                s->nodes[r] = n;
                memcpy(s->gpus + (size_t)r * gpr, s->pick, gpr * sizeof *s->pick);
                for (uint32_t k = 0; k < gpr; k++)
                    s->gpu_stamp[s->pick[k]] = s->stamp;
                s->node_stamp[n] = s->stamp;
                s->node_here[n] = here + 1;
                done = true;
                from_round = round;
                from_node = n;
            }
        if (!done)
            return false;
    }
    *pl = (sim_placement){.replicas = reps,
                          .nodes = s->nodes,
                          .gpus = s->gpus,
                          .milli = SIM_MILLI_GPU / 2,
                          .gpu_mem_mib = UINT64_MAX};
    return true;
}

static double attr_or(const job_spec *j, sim_attr a, double dflt)
{
    return job_spec_has(j, a) ? j->attr[a] : dflt;
}

/*
 * The simulator's iteration time of opportunistic job o beside guaranteed job c
 * (antman_calc_iter_time): how many of c's iterations o's data, GPU and synchronisation
 * stages span, each stage of o filling the gaps that c leaves on that resource, times
 * c's iteration time. Milliseconds.
 */
static double antman_beside_ms(const double o[3], const double c[3], double c_iter_ms)
{
    double t0 = o[0], t1 = o[1], t2 = o[2];
    double iters = floor(t0 / (c[1] + c[2]));
    double data_extra = fmod(t0, c[1] + c[2]);
    if (data_extra > 0) {
        iters += 1;
        t1 -= fmin(fmin(t1, c[2]), c[1] + c[2] - data_extra);
    }
    iters += floor(t1 / (c[0] + c[2]));
    double gpu_extra = fmod(t1, c[0] + c[2]);
    if (gpu_extra > 0) {
        iters += 1;
        if (gpu_extra < c[0])
            t2 -= fmin(t2, c[0] + c[1] - gpu_extra);
    }
    iters += floor(t2 / (c[0] + c[1]));
    double net_extra = fmod(t2, c[0] + c[1]);
    if (net_extra > c[0])
        iters += 1;
    return iters * c_iter_ms;
}

static bool profiled(const job_spec *j, double st[3], double *iter_ms)
{
    static const sim_attr a[3] = {SIM_ATTR_STAGE_CPU_MS, SIM_ATTR_STAGE_GPU_MS,
                                  SIM_ATTR_STAGE_NET_MS};
    *iter_ms = attr_or(j, SIM_ATTR_ITER_TIME_MS, 0);
    for (int i = 0; i < 3; i++)
        st[i] = attr_or(j, a[i], 0);
    return *iter_ms > 0 && job_spec_has(j, a[0]) && job_spec_has(j, a[1]) && job_spec_has(j, a[2]);
}

/* The speed (relative to solo) of opportunistic job id beside the guaranteed jobs on its
 * GPUs. */
static double opportunistic_speed(const antman_state *s, const sim_view *v, sim_job_id id)
{
    const sim_job *j = sim_view_job(v, id);
    double o[3], it;
    bool have = profiled(&j->spec, o, &it);
    double solo = have ? it : 1, cur = solo;
    sim_job_id last = SIM_JOB_NONE;
    for (uint32_t g = am_job(v, id)->first_gpu; g != UINT32_MAX; g = s->next[1][g]) {
        sim_job_id c = s->res[0][g];
        if (c == SIM_JOB_NONE || c == last)
            continue;
        last = c; /* a partner's GPUs come in runs: count each once per run */
        double cs[3], cit;
        if (have && profiled(&sim_view_job(v, c)->spec, cs, &cit) && cs[1] + cs[2] > 0 &&
            cs[0] + cs[2] > 0 && cs[0] + cs[1] > 0)
            cur = fmax(cur, antman_beside_ms(o, cs, cit));
        else
            cur = fmax(cur, 2 * solo);
    }
    return solo / cur;
}

/* Set job id, holding half of each of its GPUs from `first_gpu` on, to run at `speed`
 * times its solo speed. */
static int set_speed(const sim_view *v, sim_job_id id, uint32_t first_gpu, double speed,
                     policy_decisions *out)
{
    const sim_job *j = sim_view_job(v, id);
    uint32_t demand = sim_view_job_demand(v, id, v->gpu_node[first_gpu]);
    double f = il_share_factor(j, SIM_MILLI_GPU / 2, demand, speed);
    if (fabs(f - j->speed_factor) <= 1e-12 * f)
        return SIM_OK;
    return sim_decide_speed_factor(out, id, f);
}

static void mark(antman_state *s, const sim_view *v, sim_job_id id)
{
    antman_job *x = sim_view_job_state(v, id);
    if (x->dirty)
        return;
    x->dirty = true;
    if (s->n_dirty < s->n_gpus)
        s->dirty[s->n_dirty++] = id;
    else
        s->overflow = true;
}

/* Node n has one GPU more (up) or fewer hosting no job of kind cls; the most on any
 * node follows in O(1): it rises with n, or falls by one when n was its last. */
static void nfree_step(antman_state *s, int cls, uint32_t n, bool up)
{
    uint32_t k = s->nfree[cls][n], k2 = up ? k + 1 : k - 1;
    s->nfree[cls][n] = k2;
    maxtree_set(s->tree[cls], s->leaves, n, k2);
    s->with[cls][k]--;
    s->with[cls][k2]++;
    if (k2 > s->maxfree[cls])
        s->maxfree[cls] = k2;
    else if (k == s->maxfree[cls] && s->with[cls][k] == 0)
        s->maxfree[cls] = k2;
}

/* Record job id of kind cls on its GPUs gpus[0..k), and list its partners. */
static void hold(antman_state *s, const sim_view *v, sim_job_id id, int cls, const uint32_t *gpus,
                 uint32_t k)
{
    antman_job *x = sim_view_job_state(v, id);
    x->first_gpu = UINT32_MAX;
    for (uint32_t i = k; i-- > 0;) {
        uint32_t g = gpus[i];
        nfree_step(s, cls, v->gpu_node[g], false);
        s->res[cls][g] = id;
        s->next[cls][g] = x->first_gpu;
        x->first_gpu = g;
        if (cls == AM_GUARANTEED && hosts(s, g, 1))
            mark(s, v, s->res[1][g]);
    }
    if (cls == AM_OPPORTUNISTIC)
        mark(s, v, id);
}

/* Forget job id's GPUs (it finished or lost them), and list its partners. */
static void release(antman_state *s, const sim_view *v, sim_job_id id)
{
    antman_job *x = sim_view_job_state(v, id);
    int cls = x->cls;
    for (uint32_t g = x->first_gpu, n; g != UINT32_MAX; g = n) {
        n = s->next[cls][g];
        s->res[cls][g] = SIM_JOB_NONE;
        nfree_step(s, cls, v->gpu_node[g], true);
        if (cls == AM_GUARANTEED && hosts(s, g, 1))
            mark(s, v, s->res[1][g]);
    }
    x->first_gpu = UINT32_MAX;
}

static void antman_on_finish(void *st, const sim_view *v, sim_job_id id)
{
    release(st, v, id);
    unlink_job(st, v, id);
}

/* A failed node sent the job back to the tail of the pending list. */
static void antman_on_requeue(void *st, const sim_view *v, sim_job_id id)
{
    release(st, v, id);
    link_job(st, v, id);
}

/* Re-set the speed of job id if it is listed and still holds GPUs as opportunistic. */
static int respeed(antman_state *s, const sim_view *v, sim_job_id id, policy_decisions *out)
{
    antman_job *x = sim_view_job_state(v, id);
    if (!x->dirty)
        return SIM_OK;
    x->dirty = false;
    if (x->first_gpu == UINT32_MAX || x->cls != AM_OPPORTUNISTIC)
        return SIM_OK;
    return set_speed(v, id, x->first_gpu, opportunistic_speed(s, v, id), out);
}

/* Try pending job id as kind cls: start it if it fits, else note that its shape found
 * no GPUs in this pass; a job without GPUs is rejected. */
static int try_job(antman_state *s, const sim_view *v, sim_job_id id, int cls,
                   policy_decisions *out)
{
    const sim_job *j = sim_view_job(v, id);
    sim_placement pl;
    if (j->gpus_per_replica == 0) {
        unlink_job(s, v, id);
        return sim_decide_reject(out, id, "antman places GPU jobs only");
    }
    if (!place(s, v, j, cls, &pl)) {
        if (j->shape < s->shape_cap)
            s->failed[2 * j->shape + cls] = s->pass;
        return SIM_OK;
    }
    unlink_job(s, v, id);
    int rc = sim_decide_start(out, id, &pl);
    /* An opportunistic job gets its speed after the pass, with the others. */
    if (rc == SIM_OK && cls == AM_GUARANTEED)
        rc = set_speed(v, id, s->gpus[0], 1.0, out);
    hold(s, v, id, cls, s->gpus, pl.replicas * j->gpus_per_replica);
    return rc;
}

/* Whether pending job id is one to try as kind cls now: of that kind, of a shape that
 * has not failed in this pass, with no more GPUs per replica than some node has free. */
static bool to_try(const antman_state *s, const sim_view *v, sim_job_id id, int cls)
{
    const sim_job *j = sim_view_job(v, id);
    if (j->state != SIM_JOB_PENDING || am_job(v, id)->cls != cls ||
        (j->gpus_per_replica && j->gpus_per_replica > s->maxfree[cls]))
        return false;
    return j->shape >= s->shape_cap || s->failed[2 * j->shape + cls] != s->pass;
}

/* Only the jobs arrived since the last pass, in arrival order. */
static int try_arrivals(antman_state *s, const sim_view *v, int cls, policy_decisions *out)
{
    for (uint32_t i = 0; i < s->n_arr; i++) {
        if (!to_try(s, v, s->arr[i], cls))
            continue;
        int rc = try_job(s, v, s->arr[i], cls, out);
        if (rc != SIM_OK)
            return rc;
    }
    return SIM_OK;
}

static void line_down(am_next *h, uint32_t n, uint32_t i)
{
    am_next x = h[i];
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && h[c + 1].seq < h[c].seq)
            c++;
        if (h[c].seq >= x.seq)
            break;
        h[i] = h[c];
        i = c;
    }
    h[i] = x;
}

/*
 * Every pending job of kind cls in pending-list order, as the simulator tries them. The
 * jobs of a shape fit exactly where each other fit and GPUs are only taken within a pass,
 * so a shape is dropped at its first job that finds none (or that asks for more GPUs per
 * replica than any node has free): the pass merges the lists of pending jobs per shape
 * and kind by enqueue order, a heap of one job per shape still in the pass, and never
 * reads the jobs behind a shape that failed. O((started + shapes) log shapes).
 */
static int try_shapes(antman_state *s, const sim_view *v, int cls, policy_decisions *out)
{
    uint32_t n = 0;
    for (uint32_t k = 0; k < v->n_active_shapes; k++) {
        uint32_t sh = v->active_shapes[k];
        sim_job_id id = sh < s->shape_cap ? s->lhead[2 * sh + cls] : SIM_JOB_NONE;
        if (id != SIM_JOB_NONE)
            s->line[n++] = (am_next){sim_view_job(v, id)->enqueue_seq, id};
    }
    for (uint32_t i = n / 2; i-- > 0;)
        line_down(s->line, n, i);
    while (n) {
        sim_job_id id = s->line[0].id;
        /* The next id is taken before deciding: a start takes the job off its lists. */
        sim_job_id nx = am_job(v, id)->lnext;
        bool go = to_try(s, v, id, cls);
        if (go) {
            int rc = try_job(s, v, id, cls, out);
            if (rc != SIM_OK)
                return rc;
        }
        if (go && nx != SIM_JOB_NONE && to_try(s, v, nx, cls)) {
            s->line[0] = (am_next){sim_view_job(v, nx)->enqueue_seq, nx};
        } else {
            s->line[0] = s->line[--n];
        }
        if (n)
            line_down(s->line, n, 0);
    }
    return SIM_OK;
}

/* The same jobs in the same order by a walk of the whole pending list. O(pending). */
static int try_walk(antman_state *s, const sim_view *v, int cls, policy_decisions *out)
{
    sim_job_id nx;
    for (sim_job_id id = v->pending_head; id != SIM_JOB_NONE; id = nx) {
        nx = sim_view_next(v, id); /* before deciding: a start moves the job */
        const sim_job *j = sim_view_job(v, id);
        if (am_job(v, id)->cls != cls ||
            (j->gpus_per_replica && j->gpus_per_replica > s->maxfree[cls]))
            continue;
        int rc = try_job(s, v, id, cls, out);
        if (rc != SIM_OK)
            return rc;
    }
    return SIM_OK;
}

static bool by_shape = true;

void antman_shapes_enable(bool on)
{
    by_shape = on;
}

static int antman_schedule(void *st, const sim_view *v, sim_time now, policy_decisions *out)
{
    (void)now;
    antman_state *s = st;
    if (s->oom)
        return SIM_ENOMEM;
    if (!s->ready) {
        uint32_t most = 0;
        for (uint32_t n = 0; n < s->n_nodes && n < v->n_nodes; n++) {
            s->nfree[0][n] = s->nfree[1][n] = v->node_gpu_count[n];
            if (v->node_gpu_count[n] > most)
                most = v->node_gpu_count[n];
        }
        for (int c = 0; c < 2; c++) {
            if (!(s->with[c] = sim_calloc(most + 1, sizeof *s->with[c]))) {
                s->oom = true;
                return SIM_ENOMEM;
            }
            for (uint32_t n = 0; n < s->n_nodes; n++) {
                s->with[c][s->nfree[c][n]]++;
                s->tree[c][s->leaves + n] = s->nfree[c][n];
            }
            maxtree_build(s->tree[c], s->leaves);
            s->maxfree[c] = most;
        }
        s->ready = true;
    }
    /* A job that found no GPUs finds none until some are released: without a release,
     * only the new arrivals are tried. Within a pass GPUs are only taken, so once a job
     * of a shape and kind found none, the others of the same shape and kind are skipped
     * (the shape holds everything a placement reads). */
    bool all = v->release_epoch != s->seen_release;
    s->seen_release = v->release_epoch;
    if (!grow_shapes(s, v->n_shapes))
        return SIM_ENOMEM;
    s->pass++;
    for (int cls = 0; cls < 2; cls++) {
        int rc = !all      ? try_arrivals(s, v, cls, out)
                 : by_shape ? try_shapes(s, v, cls, out)
                            : try_walk(s, v, cls, out);
        if (rc != SIM_OK)
            return rc;
    }
    s->n_arr = 0;
    /* The opportunistic jobs whose partners changed run at their new speed. */
    for (uint32_t i = 0; i < s->n_dirty; i++) {
        int rc = respeed(s, v, s->dirty[i], out);
        if (rc != SIM_OK)
            return rc;
    }
    s->n_dirty = 0;
    if (s->overflow) {
        s->overflow = false;
        for (sim_job_id id = v->running_head; id != SIM_JOB_NONE; id = sim_view_next(v, id)) {
            int rc = respeed(s, v, id, out);
            if (rc != SIM_OK)
                return rc;
        }
    }
    return SIM_OK;
}

static void antman_on_arrival(void *st, const sim_view *v, sim_job_id id)
{
    antman_state *s = st;
    antman_job *x = sim_view_job_state(v, id);
    x->first_gpu = UINT32_MAX;
    if (s->n_arr == s->arr_cap) { /* grows at new peaks only */
        uint32_t ncap = s->arr_cap ? 2 * s->arr_cap : 256;
        sim_job_id *p = sim_reallocarray(s->arr, ncap, sizeof *p);
        if (!p) {
            s->oom = true;
            return;
        }
        s->arr = p;
        s->arr_cap = ncap;
    }
    s->arr[s->n_arr++] = id;
    if (s->random)
        x->cls = gsl_rng_uniform_int(v->rng, 2) ? AM_OPPORTUNISTIC : AM_GUARANTEED;
    else
        x->cls = sim_view_job(v, id)->spec.priority ? AM_OPPORTUNISTIC : AM_GUARANTEED;
    link_job(s, v, id);
}

static void antman_fini(void *st)
{
    antman_state *s = st;
    for (int c = 0; c < 2; c++) {
        sim_free(s->res[c]);
        sim_free(s->next[c]);
    }
    sim_free(s->dirty);
    sim_free(s->nfree[0]);
    sim_free(s->nfree[1]);
    sim_free(s->tree[0]);
    sim_free(s->tree[1]);
    sim_free(s->gpu_stamp);
    sim_free(s->node_stamp);
    sim_free(s->node_here);
    sim_free(s->with[0]);
    sim_free(s->with[1]);
    sim_free(s->arr);
    sim_free(s->failed);
    sim_free(s->line);
    sim_free(s->lhead);
    sim_free(s->ltail);
    sim_free(s->nodes);
    sim_free(s->gpus);
    sim_free(s->pick);
}

static int antman_init(void *st, const policy_config *cfg, sim_diag *d)
{
    antman_state *s = st;
    int pr, rc = policy_config_choice(cfg, antman_options, "priority", antman_priorities, &pr, d);
    if (rc != SIM_OK)
        return rc;
    s->random = pr == 1;
    s->n_gpus = cfg->n_gpus;
    size_t n = cfg->n_gpus ? cfg->n_gpus : 1;
    for (int c = 0; c < 2; c++) {
        s->res[c] = sim_calloc(n, sizeof *s->res[c]);
        s->next[c] = sim_calloc(n, sizeof *s->next[c]);
        if (!s->res[c] || !s->next[c])
            goto out_free;
        for (size_t g = 0; g < n; g++)
            s->res[c][g] = SIM_JOB_NONE;
    }
    s->n_nodes = cfg->n_nodes;
    size_t nn = cfg->n_nodes ? cfg->n_nodes : 1;
    s->nfree[0] = sim_calloc(nn, sizeof *s->nfree[0]);
    s->nfree[1] = sim_calloc(nn, sizeof *s->nfree[1]);
    s->leaves = maxtree_leaves((uint32_t)nn);
    s->tree[0] = sim_calloc(2 * (size_t)s->leaves, sizeof *s->tree[0]);
    s->tree[1] = sim_calloc(2 * (size_t)s->leaves, sizeof *s->tree[1]);
    s->gpu_stamp = sim_calloc(n, sizeof *s->gpu_stamp);
    s->node_stamp = sim_calloc(nn, sizeof *s->node_stamp);
    s->node_here = sim_calloc(nn, sizeof *s->node_here);
    if (!s->nfree[0] || !s->nfree[1] || !s->tree[0] || !s->tree[1] || !s->gpu_stamp ||
        !s->node_stamp || !s->node_here)
        goto out_free;
    s->seen_release = UINT64_MAX;
    s->nodes = sim_calloc(n, sizeof *s->nodes);
    s->gpus = sim_calloc(n, sizeof *s->gpus);
    s->pick = sim_calloc(n, sizeof *s->pick);
    s->dirty = sim_calloc(n, sizeof *s->dirty);
    if (!s->nodes || !s->gpus || !s->pick || !s->dirty)
        goto out_free;
    return SIM_OK;
out_free:
    /* The core does not call fini after a failed init: what init got is freed here. */
    antman_fini(st);
    return sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "policy 'antman': out of memory");
}

const policy_ops policy_antman = {
    .abi_version = POLICY_ABI_VERSION,
    .name = "antman",
    .summary = "AntMan-style packing as the Muri simulator runs it: a guaranteed and an "
               "opportunistic job per GPU, the opportunistic one slowed, no preemption",
    .state_size = sizeof(antman_state),
    .job_state_size = sizeof(antman_job),
    .options = antman_options,
    .init = antman_init,
    .fini = antman_fini,
    .on_arrival = antman_on_arrival,
    .on_finish = antman_on_finish,
    .on_requeue = antman_on_requeue,
    .schedule = antman_schedule,
    .no_roles = true,
};
