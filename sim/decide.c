/*
 * decide.c: the decisions a policy can take, validated and applied at once, and the
 * cluster accounting they share with the event loop (allocation records, resident
 * lists per GPU, node summaries, tenant usage, utilisation totals).
 *
 * Validation happens before any state changes, so a rejected decision leaves the
 * cluster exactly as it was. A rejection records "policy 'p': decision D job 'id':
 * reason" and makes every later decision of the same schedule() call fail, so the
 * run ends with the first error.
 */
#include "sim/engine_int.h"

#include "base/alloc.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* ---- Accounting primitives --------------------------------------------------------- */

double sim__job_gpus_held(const sim_engine *e, const sim_job *j)
{
    (void)e;
    return (double)j->replicas * (double)j->gpus_per_replica * (double)j->share_milli / 1000.0;
}

void sim__job_touch(sim_engine *e, sim_job_id id)
{
    sim_job *j = &e->jobs[id];
    sim_time dt_us = e->now - j->last_update_us;
    if (dt_us > 0) {
        double dt = (double)dt_us / 1e6, before = j->work_done_s;
        bool placed = j->state == SIM_JOB_RUNNING || j->state == SIM_JOB_PAUSED;
        /* The GPUs held are constant since the last update (every change touches). */
        double held = placed ? sim__job_gpus_held(e, j) : 0, before_gpu = j->placed_gpu_s;
        j->placed_gpu_s += held * dt;
        double speed = j->state == SIM_JOB_RUNNING ? j->speed : 0;
        if (j->state == SIM_JOB_RUNNING) {
            j->work_done_s += j->speed * dt;
            if (j->work_done_s > j->work_total_s)
                j->work_done_s = j->work_total_s;
            j->attained_gpu_s += dt * held;
        }
        /* A periodic checkpoint since the last update (the speed was constant since; 0
         * while paused): the work done at the latest one. */
        sim_time iv = e->checkpoint_us;
        if (placed && iv > 0) {
            /* In whole microseconds: a failure at a checkpoint's microsecond keeps it. */
            sim_time prev = j->last_update_us - j->last_start_us;
            sim_time ck = (e->now - j->last_start_us) / iv * iv;
            if (ck > prev) {
                double w = before + speed * (double)(ck - prev) / 1e6;
                j->ckpt_work_s = w < j->work_total_s ? w : j->work_total_s;
                j->ckpt_gpu_s = before_gpu + held * (double)(ck - prev) / 1e6;
            }
        }
        if (placed)
            j->placed_us += dt_us;
    }
    j->last_update_us = e->now;
}

void sim__mark_dirty(sim_engine *e, sim_job_id id)
{
    if (e->job_dirty[id])
        return;
    sim__job_touch(e, id);
    e->job_dirty[id] = 1;
    e->dirty[e->n_dirty++] = id;
}

void sim__work_changed(sim_engine *e, sim_job_id id)
{
    sim__mark_dirty(e, id);
    e->job_dirty[id] = 2;
}

void sim__set_speed(sim_engine *e, sim_job_id id, double speed)
{
    sim_job *j = &e->jobs[id];
    if (j->speed > 0)
        e->n_progressing--;
    if (speed > 0)
        e->n_progressing++;
    j->speed = speed;
    e->speed_ring[++e->v.speed_epoch % SIM_SPEED_RING] = id;
}

/* Job j's part of the online figures (e->online) with r replicas and demand d, added
 * (sign 1) or taken out (-1). */
static void online_part(sim_engine *e, const sim_job *j, uint32_t r, uint32_t d, int64_t sign)
{
    if (j->is_service) {
        int64_t g = j->gpus_per_replica ? j->gpus_per_replica : 1;
        e->online[0] += sign * (int64_t)d * g;
        e->online[1] += sign * (int64_t)r * g;
        if (d > r)
            e->online[2] += sign * (int64_t)(d - r) * g;
    } else if (job_spec_has(&j->spec, SIM_ATTR_MIN_REPLICAS) ||
               job_spec_has(&j->spec, SIM_ATTR_MAX_REPLICAS)) {
        e->online[3] += sign * (int64_t)r;
    }
}

void sim__set_demand(sim_engine *e, sim_job *j, uint32_t d)
{
    if (j->listed) {
        online_part(e, j, j->replicas, j->demand_replicas, -1);
        online_part(e, j, j->replicas, d, 1);
    }
    j->demand_replicas = d;
}

void sim__list_remove(sim_engine *e, sim_job_id id, bool running)
{
    sim_job *j = &e->jobs[id];
    online_part(e, j, j->replicas, j->demand_replicas, -1);
    j->listed = false;
    uint32_t *head = running ? &e->v.running_head : &e->v.pending_head;
    uint32_t *tail = running ? &e->v.running_tail : &e->v.pending_tail;
    uint32_t next = e->job_next[id];
    if (j->list_prev != NIL)
        e->job_next[j->list_prev] = next;
    else
        *head = next;
    if (next != NIL)
        e->jobs[next].list_prev = j->list_prev;
    else
        *tail = j->list_prev;
    if (running) {
        e->v.n_running--;
        e->tenant_running[j->spec.tenant]--;
    } else {
        e->v.n_pending--;
        e->tenant_pending[j->spec.tenant]--;
        sim__shape_detach(e, id);
    }
}

void sim__list_append(sim_engine *e, sim_job_id id, bool running)
{
    sim_job *j = &e->jobs[id];
    uint32_t *head = running ? &e->v.running_head : &e->v.pending_head;
    uint32_t *tail = running ? &e->v.running_tail : &e->v.pending_tail;
    online_part(e, j, j->replicas, j->demand_replicas, 1);
    j->listed = true;
    e->job_next[id] = NIL;
    j->list_prev = *tail;
    if (*tail != NIL)
        e->job_next[*tail] = id;
    else
        *head = id;
    *tail = id;
    if (running) {
        e->v.n_running++;
        e->tenant_running[j->spec.tenant]++;
    } else {
        e->v.n_pending++;
        e->tenant_pending[j->spec.tenant]++;
        j->enqueue_seq = e->v.enqueue_count++;
        sim__shape_attach(e, id);
    }
}

/* Sum quarter q of the nodes (nodes q * SIM_NODE_QUARTER onwards) from its nodes. */
static void quarter_refresh(sim_engine *e, uint32_t q)
{
    uint32_t lo = q * SIM_NODE_QUARTER, hi = lo + SIM_NODE_QUARTER;
    if (hi > e->n_nodes)
        hi = e->n_nodes;
    uint32_t mg = 0, mm = 0;
    uint64_t mc = 0, mmem = 0, types = 0;
    double mcf = -1;
    /* One spare slot after each part, where the nodes without a tier are recorded
     * unread. */
    double fr[SIM_FRAC_WHOLE + 1 + SIM_FRAC_SHARE + 1];
    double *fw = fr, *fs = fr + SIM_FRAC_WHOLE + 1;
    for (uint32_t k = 0; k < sizeof fr / sizeof *fr; k++)
        fr[k] = -1;
    /* Reads the compact per-node records only: this runs at every start and end. */
    for (uint32_t n = lo; n < hi; n++) {
        const sim_node_sum *ns = &e->node_sum[n];
        if (!ns->up)
            continue;
        uint32_t fg = ns->free_gpus, fm = ns->max_free_milli;
        if (fg > mg)
            mg = fg;
        if (fm > mm)
            mm = fm;
        if (ns->cpu_free > mc)
            mc = ns->cpu_free;
        if (ns->mem_free > mmem)
            mmem = ns->mem_free;
        if (e->node_cpu_frac[n] > mcf)
            mcf = e->node_cpu_frac[n];
        types |= UINT64_C(1) << (ns->gpu_count ? ns->gpu_type : 0);
        /* Record the node at its highest tier only; the suffix maxima below make each
         * tier cover every node that qualifies for it. */
        double f = e->node_frac[n];
        uint32_t k = e->node_tier_whole[n], i = e->node_tier_share[n];
        fw[k] = f > fw[k] ? f : fw[k];
        fs[i] = f > fs[i] ? f : fs[i];
    }
    for (uint32_t k = SIM_FRAC_WHOLE - 1; k-- > 0;)
        if (fw[k + 1] > fw[k])
            fw[k] = fw[k + 1];
    for (uint32_t i = SIM_FRAC_SHARE - 1; i-- > 0;)
        if (fs[i + 1] > fs[i])
            fs[i] = fs[i + 1];
    sim_quarter_sum *qs = &e->quarter[q];
    memcpy(qs->frac, fw, SIM_FRAC_WHOLE * sizeof *fw);
    memcpy(qs->frac + SIM_FRAC_WHOLE, fs, SIM_FRAC_SHARE * sizeof *fs);
    qs->max_cpu_frac = mcf;
    qs->max_cpu_free = mc;
    qs->max_mem_free = mmem;
    qs->types = types;
    qs->max_free_gpus = mg;
    qs->max_free_milli = mm;
}

/* a becomes the field-by-field maximum of a and b (the union of their types). */
static void sum_max(sim_quarter_sum *a, const sim_quarter_sum *b)
{
#if defined(__SSE2__)
    /* Two at a time: maxpd is x > y ? x : y, exactly (no fraction is NaN). */
    for (uint32_t k = 0; k < SIM_FRAC_WHOLE + SIM_FRAC_SHARE; k += 2)
        _mm_storeu_pd(a->frac + k,
                      _mm_max_pd(_mm_loadu_pd(b->frac + k), _mm_loadu_pd(a->frac + k)));
#else
    for (uint32_t k = 0; k < SIM_FRAC_WHOLE + SIM_FRAC_SHARE; k++)
        a->frac[k] = b->frac[k] > a->frac[k] ? b->frac[k] : a->frac[k];
#endif
    a->max_cpu_frac = b->max_cpu_frac > a->max_cpu_frac ? b->max_cpu_frac : a->max_cpu_frac;
    a->max_cpu_free = b->max_cpu_free > a->max_cpu_free ? b->max_cpu_free : a->max_cpu_free;
    a->max_mem_free = b->max_mem_free > a->max_mem_free ? b->max_mem_free : a->max_mem_free;
    a->types |= b->types;
    a->max_free_gpus = b->max_free_gpus > a->max_free_gpus ? b->max_free_gpus : a->max_free_gpus;
    a->max_free_milli =
        b->max_free_milli > a->max_free_milli ? b->max_free_milli : a->max_free_milli;
}

/* Sum block b again: its quarters in `dirty` (bit q: quarter q of the block) from their
 * nodes, then the block from its four quarters (maxima of maxima: the same figures as
 * from the nodes). */
static void block_refresh(sim_engine *e, uint32_t b, uint32_t dirty)
{
    for (uint32_t q = 0; q < 4; q++)
        if ((dirty >> q) & 1u)
            quarter_refresh(e, 4 * b + q);
    sim_quarter_sum s = e->quarter[4 * b];
    for (uint32_t q = 1; q < 4; q++)
        sum_max(&s, &e->quarter[4 * b + q]);
    e->block_max_free_gpus[b] = s.max_free_gpus;
    e->block_max_free_milli[b] = s.max_free_milli;
    e->block_max_cpu_free[b] = s.max_cpu_free;
    e->block_max_mem_free[b] = s.max_mem_free;
    e->block_max_cpu_frac[b] = s.max_cpu_frac;
    e->block_types[b] = s.types;
    memcpy(e->block_frac_whole + (size_t)b * SIM_FRAC_WHOLE, s.frac,
           SIM_FRAC_WHOLE * sizeof *s.frac);
    memcpy(e->block_frac_share + (size_t)b * SIM_FRAC_SHARE, s.frac + SIM_FRAC_WHOLE,
           SIM_FRAC_SHARE * sizeof *s.frac);
}

void sim__sync_blocks(const sim_view *v)
{
    sim_engine *e = (sim_engine *)v->internal; /* the view is the engine's own */
    for (uint32_t i = 0; i < e->n_dirty_blocks; i++) {
        uint32_t b = e->dirty_blocks[i];
        block_refresh(e, b, e->block_dirty[b]);
        e->block_dirty[b] = 0;
    }
    e->n_dirty_blocks = 0;
}

/* A node's GPUs are read here right after a decision wrote one or two of their 32-bit
 * counters. GCC vectorises the loop into 16-byte loads, and a load that spans a store
 * still in flight waits for it to retire (no store-to-load forwarding): under gavel the
 * profile put two thirds of this function's samples on that load, and the scalar loop
 * (whose loads are forwarded) took 0.97 of the run's time. */
#if defined(__GNUC__) && !defined(__clang__)
#define SCALAR_LOOPS __attribute__((optimize("no-tree-vectorize")))
#else
#define SCALAR_LOOPS
#endif

SCALAR_LOOPS void sim__node_refresh(sim_engine *e, uint32_t n)
{
    uint32_t first = e->node_gpu_first[n], cnt = e->node_gpu_count[n];
    uint32_t free_gpus = 0, max_free = 0;
    for (uint32_t g = first; g < first + cnt; g++) {
        uint32_t f = SIM_MILLI_GPU - e->gpu_used_milli[g];
        if (e->gpu_nres[g] == 0)
            free_gpus++;
        if (f > max_free)
            max_free = f;
    }
    e->node_free_gpus[n] = free_gpus;
    e->node_max_free_milli[n] = max_free;
    sim_node_sum *ns = &e->node_sum[n];
    ns->cpu_free = e->node_cpu_total[n] - e->node_cpu_used[n];
    ns->mem_free = e->node_mem_total[n] - e->node_mem_used[n];
    ns->used_milli = (uint32_t)e->node_used_milli[n];
    ns->gpu_count = (uint16_t)cnt;
    ns->free_gpus = (uint16_t)free_gpus;
    ns->max_free_milli = (uint16_t)max_free;
    ns->gpu_type = (uint8_t)e->node_gpu_type[n];
    ns->up = e->node_up[n];
    e->node_frac[n] = cnt ? (double)ns->used_milli / (1000.0 * (double)cnt) : 0;
    bool tiered = cnt && max_free;
    e->node_tier_whole[n] =
        (uint8_t)(tiered && free_gpus
                      ? (free_gpus < SIM_FRAC_WHOLE ? free_gpus : SIM_FRAC_WHOLE) - 1
                      : SIM_FRAC_WHOLE);
    e->node_tier_share[n] = (uint8_t)(!tiered                           ? SIM_FRAC_SHARE
                                      : max_free / 100 < SIM_FRAC_SHARE ? max_free / 100
                                                                        : SIM_FRAC_SHARE - 1);
    /* As place_score_most_allocated scores a CPU-only replica. */
    e->node_cpu_frac[n] =
        e->node_cpu_total[n] ? (double)e->node_cpu_used[n] / (double)e->node_cpu_total[n] : 0;
    uint32_t b = n / SIM_NODE_BLOCK;
    if (!e->block_dirty[b])
        e->dirty_blocks[e->n_dirty_blocks++] = b;
    e->block_dirty[b] |= (uint8_t)(1u << (n % SIM_NODE_BLOCK / SIM_NODE_QUARTER));
    uint64_t ep = ++e->v.change_epoch;
    e->change_ring[ep % SIM_CHANGE_RING] = n;
    e->node_change_epoch[n] = ep;
}

uint32_t sim__job_demand(const sim_engine *e, const sim_job *j, uint32_t node)
{
    uint32_t t = j->spec.true_milli ? j->spec.true_milli : SIM_MILLI_GPU;
    if (e->rate.demand)
        t = e->rate.demand(e->rate.ctx, &j->spec, e->node_gpu_type[node]);
    return t < 1 ? 1 : t > SIM_MILLI_GPU ? SIM_MILLI_GPU : t;
}

/* The share of its GPU that allocation r's job really uses while holding `share`. */
static uint32_t eff_milli(const sim_alloc_rec *r, uint32_t share)
{
    return share < r->demand ? share : r->demand;
}

/* Sum of eff_milli over the job's GPU allocations. */
static uint64_t job_eff_milli(const sim_engine *e, const sim_job *j)
{
    uint64_t sum = 0;
    for (uint32_t a = j->alloc_head; a != NIL; a = e->allocs[a].next_in_job)
        if (e->allocs[a].gpu != SIM_GPU_NONE)
            sum += eff_milli(&e->allocs[a], e->allocs[a].milli);
    return sum;
}

/* Mark every other job resident on GPU g dirty (their interference changed). */
static void dirty_neighbours(sim_engine *e, uint32_t g, sim_job_id self)
{
    if (!e->rate.interference)
        return;
    for (uint32_t a = e->gpu_first_res[g]; a != NIL; a = e->allocs[a].next_on_gpu)
        if (e->allocs[a].job != self)
            sim__mark_dirty(e, e->allocs[a].job);
}

static void gpu_link(sim_engine *e, uint32_t a)
{
    sim_alloc_rec *r = &e->allocs[a];
    uint32_t g = r->gpu;
    r->prev_on_gpu = NIL;
    r->next_on_gpu = e->gpu_first_res[g];
    if (r->next_on_gpu != NIL)
        e->allocs[r->next_on_gpu].prev_on_gpu = a;
    e->gpu_first_res[g] = a;
    e->gpu_nres[g]++;
}

static void gpu_unlink(sim_engine *e, uint32_t a)
{
    sim_alloc_rec *r = &e->allocs[a];
    uint32_t g = r->gpu;
    if (r->prev_on_gpu != NIL)
        e->allocs[r->prev_on_gpu].next_on_gpu = r->next_on_gpu;
    else
        e->gpu_first_res[g] = r->next_on_gpu;
    if (r->next_on_gpu != NIL)
        e->allocs[r->next_on_gpu].prev_on_gpu = r->prev_on_gpu;
    e->gpu_nres[g]--;
}

/* Undo one allocation's accounting and return it to the pool. The caller refreshes the
 * node's summaries (once per node, after all of its allocations). */
static void release_one(sim_engine *e, const sim_job *j, uint32_t a)
{
    sim_alloc_rec *r = &e->allocs[a];
    sim__note_release(e, r->node);
    e->node_cpu_used[r->node] -= r->cpu_milli;
    e->node_mem_used[r->node] -= r->mem_mib;
    e->cpu_used_all -= r->cpu_milli;
    if (r->gpu != SIM_GPU_NONE) {
        e->gpu_used_milli[r->gpu] -= r->milli;
        e->gpu_used_mem[r->gpu] -= r->gpu_mem_mib;
        e->node_used_milli[r->node] -= r->milli;
        e->tenant_used_milli[j->spec.tenant] -= r->milli;
        e->used_milli_total -= r->milli;
        if (j->state == SIM_JOB_RUNNING)
            e->eff_milli_total -= eff_milli(r, r->milli);
        gpu_unlink(e, a);
        dirty_neighbours(e, r->gpu, r->job);
    }
    r->next_in_job = e->alloc_free;
    e->alloc_free = a;
    e->n_alloc_free++;
}

void sim__rep_account(sim_engine *e, sim_job *j, uint32_t next)
{
    sim__svc_account(e, j);
    if (j->listed) {
        online_part(e, j, j->replicas, j->demand_replicas, -1);
        online_part(e, j, next, j->demand_replicas, 1);
    }
    j->rep_seconds += (double)j->replicas * (double)(e->now - j->rep_since_us) / 1e6;
    j->rep_since_us = e->now;
    if (next > 0) {
        if (j->rep_max == 0 || next < j->rep_min)
            j->rep_min = next;
        if (next > j->rep_max)
            j->rep_max = next;
    }
}

void sim__release_allocs(sim_engine *e, sim_job_id id)
{
    sim_job *j = &e->jobs[id];
    sim__rep_account(e, j, 0);
    /* A replica's allocations are consecutive and on one node. */
    for (uint32_t a = j->alloc_head; a != NIL;) {
        uint32_t next = e->allocs[a].next_in_job;
        uint32_t node = e->allocs[a].node;
        release_one(e, j, a);
        if (next == NIL || e->allocs[next].node != node)
            sim__node_refresh(e, node);
        a = next;
    }
    j->alloc_head = NIL;
    for (uint32_t a = j->role_head; a != NIL;) {
        uint32_t next = e->allocs[a].next_in_job;
        uint32_t node = e->allocs[a].node;
        release_one(e, j, a);
        sim__node_refresh(e, node);
        a = next;
    }
    j->role_head = NIL;
    j->replicas = 0;
    j->share_milli = 0;
    j->share_mem_mib = 0;
}

/* A restart without a checkpoint (touched now): the work done since the segment's start
 * or its last periodic checkpoint is lost, whatever speeds it ran at. Returns it. */
static double lose_since_checkpoint(sim_engine *e, sim_job *j)
{
    double lost = j->work_done_s - j->ckpt_work_s;
    if (!(lost > 0))
        lost = 0;
    /* The GPUs held since that checkpoint, as many as the job held at each moment. */
    double held = j->placed_gpu_s - j->ckpt_gpu_s;
    j->work_done_s -= lost;
    j->ckpt_work_s = j->work_done_s;
    j->ckpt_gpu_s = j->placed_gpu_s;
    j->lost_work_s += lost;
    e->sum.lost_work_s += lost;
    if (lost > 0 && held > 0)
        e->sum.lost_gpu_seconds += held;
    return lost;
}

void sim__requeue(sim_engine *e, sim_job_id id, bool checkpoint, bool preempted)
{
    sim_job *j = &e->jobs[id];
    sim__job_touch(e, id);
    if (!checkpoint)
        lose_since_checkpoint(e, j);
    sim__release_allocs(e, id);
    sim__set_speed(e, id, 0);
    e->job_version[id]++;
    sim__list_remove(e, id, true);
    j->state = SIM_JOB_PENDING;
    j->queued_since_us = e->now;
    if (preempted) {
        j->preemptions++;
        e->sum.preemptions++;
    }
    sim__note_loss(e, j);
    sim__list_append(e, id, false);
}

void sim__note_loss(sim_engine *e, sim_job *j)
{
    sim_job_id id = (sim_job_id)(j - e->jobs);
    double left = j->work_total_s - j->work_done_s;
    if (left < j->least_left_s) {
        j->least_left_s = left;
        e->stall = 0;
    } else {
        /* Each point the segment ran through was no progress either (one at least): a
         * livelock whose segments span many points (a short period with the cut
         * coming much later, say) ends after as many points as one whose segments are
         * cut at the next point. */
        uint64_t ran = e->points - e->seg_point[id];
        e->stall += ran > 1 ? ran : 1;
    }
    e->seg_point[id] = e->points;
}

/* ---- View helpers ------------------------------------------------------------------ */

double sim_view_work_done(const sim_view *v, sim_job_id id)
{
    const sim_job *j = &v->jobs[id];
    double done = j->work_done_s;
    if (j->state == SIM_JOB_RUNNING && v->now > j->last_update_us)
        done += j->speed * (double)(v->now - j->last_update_us) / 1e6;
    return done < j->work_total_s ? done : j->work_total_s;
}

double sim_view_work_left(const sim_view *v, sim_job_id id)
{
    return v->jobs[id].work_total_s - sim_view_work_done(v, id);
}

uint32_t sim_view_job_demand(const sim_view *v, sim_job_id id, uint32_t n)
{
    return sim__job_demand(v->internal, &v->jobs[id], n);
}

double sim_view_type_speed(const sim_view *v, sim_job_id id, uint16_t t)
{
    const sim_engine *e = v->internal;
    if (!e->rate.throughput)
        return 1.0;
    return e->rate.throughput(e->rate.ctx, &v->jobs[id].spec, t);
}

uint32_t sim_view_job_used_milli(const sim_view *v, sim_job_id id)
{
    const sim_engine *e = v->internal;
    const sim_job *j = &v->jobs[id];
    if (j->state != SIM_JOB_RUNNING || j->alloc_head == NIL)
        return 0;
    const sim_alloc_rec *r = &e->allocs[j->alloc_head];
    if (r->gpu == SIM_GPU_NONE)
        return 0;
    return eff_milli(r, r->milli);
}

double sim_view_attained(const sim_view *v, sim_job_id id)
{
    const sim_job *j = &v->jobs[id];
    double a = j->attained_gpu_s;
    if (j->state == SIM_JOB_RUNNING && v->now > j->last_update_us)
        a += (double)(v->now - j->last_update_us) / 1e6 * (double)j->replicas *
             (double)j->gpus_per_replica * (double)j->share_milli / 1000.0;
    return a;
}

bool sim_view_replica_fits(const sim_view *v, const sim_job *j, uint32_t n, uint32_t milli,
                           uint64_t gpu_mem_mib)
{
    if (!v->node_up[n])
        return false;
    if (v->node_cpu_used[n] + j->cpu_per_replica > v->node_cpu_total[n] ||
        v->node_mem_used[n] + j->mem_per_replica > v->node_mem_total[n])
        return false;
    uint32_t need = j->gpus_per_replica;
    if (need == 0)
        return true;
    if (!sim_job_type_ok(j, v->node_gpu_type[n]) || v->node_gpu_count[n] < need)
        return false;
    if (milli == SIM_MILLI_GPU && gpu_mem_mib == 0)
        return v->node_free_gpus[n] >= need;
    if (v->node_max_free_milli[n] < milli)
        return false;
    uint32_t first = v->node_gpu_first[n], cnt = v->node_gpu_count[n], ok = 0;
    for (uint32_t g = first; g < first + cnt && ok < need; g++)
        if (SIM_MILLI_GPU - v->gpu_used_milli[g] >= milli &&
            v->gpu_mem_total[g] - v->gpu_used_mem[g] >= gpu_mem_mib)
            ok++;
    return ok >= need;
}

double sim_view_scaling(const sim_view *v, sim_job_id id, uint32_t n)
{
    const sim_engine *e = v->internal;
    const sim_job *j = &e->jobs[id];
    if (n == 0 || j->nominal_replicas == 0)
        return 0;
    if (e->rate.scaling)
        return e->rate.scaling(e->rate.ctx, &j->spec, n, j->nominal_replicas);
    return (double)n / (double)j->nominal_replicas;
}

bool sim_view_has_interference(const sim_view *v)
{
    const sim_engine *e = v->internal;
    return e->rate.interference != NULL;
}

double sim_view_interference_cost(const sim_view *v, sim_job_id id, uint32_t g, uint32_t milli)
{
    const sim_engine *e = v->internal;
    if (!e->rate.interference || g >= e->n_gpus || id >= e->job_fresh)
        return 0;
    uint16_t type = e->node_gpu_type[e->gpu_node[g]];
    const sim_job *j = &e->jobs[id];
    /* res[0..n): the residents; others: scratch for one resident's neighbours. */
    sim_resident *res = e->view_res, *others = e->view_res + SIM_MILLI_GPU + 2;
    uint32_t n = 0;
    for (uint32_t a = e->gpu_first_res[g]; a != NIL && n < SIM_MILLI_GPU; a = e->allocs[a].next_on_gpu) {
        if (e->allocs[a].job == id)
            continue;
        res[n].job = &e->jobs[e->allocs[a].job].spec;
        res[n].milli = e->allocs[a].milli;
        n++;
    }
    if (n == 0)
        return 0;
    double cost = 1.0 - e->rate.interference(e->rate.ctx, &j->spec, milli, res, n, type);
    for (uint32_t k = 0; k < n; k++) {
        uint32_t m = 0;
        for (uint32_t i = 0; i < n; i++)
            if (i != k)
                others[m++] = res[i];
        double before = m ? e->rate.interference(e->rate.ctx, res[k].job, res[k].milli, others,
                                                 m, type)
                          : 1.0;
        others[m].job = &j->spec;
        others[m].milli = milli;
        double after = e->rate.interference(e->rate.ctx, res[k].job, res[k].milli, others,
                                            m + 1, type);
        cost += before - after;
    }
    return cost;
}

/* ---- Decisions ---------------------------------------------------------------------- */

static int fail(policy_decisions *out, sim_job_id id, const char *what, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int fail(policy_decisions *out, sim_job_id id, const char *what, const char *fmt, ...)
{
    sim_engine *e = out->e;
    if (e->dec_status != SIM_OK)
        return SIM_EINVAL;
    char reason[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof reason, fmt, ap);
    va_end(ap);
    const char *jid = id < e->job_fresh && e->jobs[id].state != SIM_JOB_FREE ? e->jobs[id].spec.id
                                                                             : "?";
    e->dec_status = SIM_EINVAL;
    sim_diag_set(&e->dec_diag, SIM_EINVAL, NULL, 0, 0,
                 "policy '%s': decision %s job '%s' (id %u) at t=%.6f s: %s", e->pol->name, what,
                 jid, id, (double)e->now / 1e6, reason);
    return SIM_EINVAL;
}

/* A decision the engine could not carry out through no fault of the policy's: out of
 * memory, or jobs.csv not written (st, as sim__output_failed says it). The run ends with
 * that status; like fail(), every later decision of the call fails. */
static int engine_fail(policy_decisions *out, int st)
{
    sim_engine *e = out->e;
    if (e->dec_status != SIM_OK)
        return SIM_EINVAL;
    e->dec_status = sim__output_failed(&e->dec_diag, st, "jobs.csv");
    return e->dec_status;
}

/* Common entry check: the schedule call has not failed and the job id is in use. */
static sim_job *job_for(policy_decisions *out, sim_job_id id, const char *what)
{
    sim_engine *e = out->e;
    if (e->dec_status != SIM_OK)
        return NULL;
    if (id >= e->job_fresh || e->jobs[id].state == SIM_JOB_FREE) {
        fail(out, id, what, "no job in flight has this id");
        return NULL;
    }
    e->decisions++;
    return &e->jobs[id];
}

static const char *state_name(sim_job_state s)
{
    switch (s) {
    case SIM_JOB_PENDING: return "pending";
    case SIM_JOB_RUNNING: return "running";
    case SIM_JOB_PAUSED: return "paused";
    default: return "not in flight";
    }
}

static bool elastic_bounds(const sim_job *j, uint32_t *lo, uint32_t *hi)
{
    bool el = job_spec_has(&j->spec, SIM_ATTR_MIN_REPLICAS) ||
              job_spec_has(&j->spec, SIM_ATTR_MAX_REPLICAS);
    *lo = *hi = j->nominal_replicas;
    if (job_spec_has(&j->spec, SIM_ATTR_MIN_REPLICAS))
        *lo = (uint32_t)j->spec.attr[SIM_ATTR_MIN_REPLICAS];
    if (job_spec_has(&j->spec, SIM_ATTR_MAX_REPLICAS))
        *hi = (uint32_t)j->spec.attr[SIM_ATTR_MAX_REPLICAS];
    if (*lo < 1)
        *lo = 1;
    return el;
}

/*
 * Check that `count` replicas fit as placed, on top of the current state. Scratch
 * marks (per node CPU/memory, per GPU) are always cleared before returning.
 */
static int validate(policy_decisions *out, sim_job_id id, const char *what, uint32_t count,
                    const sim_placement *p, uint32_t milli, uint64_t gmem)
{
    sim_engine *e = out->e;
    const sim_job *j = &e->jobs[id];
    uint32_t gpr = j->gpus_per_replica;
    int st = SIM_OK;
    uint32_t r_done = 0, g_done = 0;
    if (!p->nodes)
        return fail(out, id, what, "the placement has no node list");
    if (gpr && !p->gpus)
        return fail(out, id, what, "the placement has no GPU list");
    for (uint32_t r = 0; r < count && st == SIM_OK; r++, r_done++) {
        uint32_t n = p->nodes[r];
        if (n >= e->n_nodes) {
            st = fail(out, id, what, "replica %u: node %u does not exist", r, n);
            break;
        }
        if (!e->node_up[n]) {
            st = fail(out, id, what, "replica %u: node %s is down", r, e->node_name[n]);
            break;
        }
        if (gpr && !sim_job_type_ok(j, e->node_gpu_type[n])) {
            st = fail(out, id, what, "replica %u: node %s has GPU type %s, which the job does not "
                      "accept", r, e->node_name[n],
                      e->v.gpu_type_name(&e->v, e->node_gpu_type[n]));
            break;
        }
        e->node_scratch_cpu[n] += j->cpu_per_replica;
        e->node_scratch_mem[n] += j->mem_per_replica;
        if (e->node_cpu_used[n] + e->node_scratch_cpu[n] > e->node_cpu_total[n]) {
            st = fail(out, id, what,
                      "replica %u: node %s has %llu milli-CPU free, the placement needs %llu", r,
                      e->node_name[n],
                      (unsigned long long)(e->node_cpu_total[n] - e->node_cpu_used[n]),
                      (unsigned long long)e->node_scratch_cpu[n]);
            r_done++;
            break;
        }
        if (e->node_mem_used[n] + e->node_scratch_mem[n] > e->node_mem_total[n]) {
            st = fail(out, id, what,
                      "replica %u: node %s has %llu MiB of memory free, the placement needs %llu",
                      r, e->node_name[n],
                      (unsigned long long)(e->node_mem_total[n] - e->node_mem_used[n]),
                      (unsigned long long)e->node_scratch_mem[n]);
            r_done++;
            break;
        }
        for (uint32_t k = 0; k < gpr; k++) {
            uint32_t g = p->gpus[r * gpr + k];
            if (g >= e->n_gpus) {
                st = fail(out, id, what, "replica %u: GPU %u does not exist", r, g);
                break;
            }
            if (e->gpu_node[g] != n) {
                st = fail(out, id, what, "replica %u: GPU %u is on node %s, not on %s", r, g,
                          e->node_name[e->gpu_node[g]], e->node_name[n]);
                break;
            }
            if (e->gpu_scratch[g]) {
                st = fail(out, id, what, "GPU %u appears twice in the placement", g);
                break;
            }
            e->gpu_scratch[g] = 1;
            g_done = r * gpr + k + 1;
            uint32_t freem = SIM_MILLI_GPU - e->gpu_used_milli[g];
            if (freem < milli) {
                st = fail(out, id, what,
                          "GPU %u (node %s) has %u milli-GPU free, the job needs %u", g,
                          e->node_name[n], freem, milli);
                break;
            }
            uint64_t freemem = e->gpu_mem_total[g] - e->gpu_used_mem[g];
            if (freemem < gmem) {
                st = fail(out, id, what, "GPU %u (node %s) has %llu MiB free, the job needs %llu",
                          g, e->node_name[n], (unsigned long long)freemem,
                          (unsigned long long)gmem);
                break;
            }
        }
    }
    for (uint32_t r = 0; r < r_done && r < count; r++) {
        uint32_t n = p->nodes[r];
        if (n < e->n_nodes)
            e->node_scratch_cpu[n] = e->node_scratch_mem[n] = 0;
    }
    for (uint32_t i = 0; i < g_done; i++)
        if (p->gpus[i] < e->n_gpus)
            e->gpu_scratch[p->gpus[i]] = 0;
    return st;
}

static uint32_t take_alloc(sim_engine *e);

/*
 * Check that the roles of p (master, parameter servers) fit beside the validated
 * trainers of the same placement: each node's CPU and memory must hold what the
 * trainers and roles placed on it take. Scratch marks are cleared before returning.
 */
static int validate_roles(policy_decisions *out, sim_job_id id, const char *what,
                          const sim_placement *p)
{
    sim_engine *e = out->e;
    const sim_job *j = &e->jobs[id];
    if (p->roles != j->n_roles || !p->role_nodes)
        return fail(out, id, what,
                    "the job has a master and %u parameter servers; the placement "
                    "places %u of its %u roles",
                    j->n_roles - 1, p->role_nodes ? p->roles : 0, j->n_roles);
    int st = SIM_OK;
    uint32_t r_done = 0;
    for (uint32_t r = 0; r < p->replicas; r++) {
        e->node_scratch_cpu[p->nodes[r]] += j->cpu_per_replica;
        e->node_scratch_mem[p->nodes[r]] += j->mem_per_replica;
    }
    for (uint32_t r = 0; r < j->n_roles && st == SIM_OK; r++) {
        uint32_t n = p->role_nodes[r];
        char role[40] = "the master";
        if (r > 0)
            snprintf(role, sizeof role, "parameter server %u", r);
        if (n >= e->n_nodes) {
            st = fail(out, id, what, "%s: node %u does not exist", role, n);
            break;
        }
        r_done = r + 1;
        if (!e->node_up[n]) {
            st = fail(out, id, what, "%s: node %s is down", role, e->node_name[n]);
            break;
        }
        e->node_scratch_cpu[n] += sim_job_role_cpu(j, r);
        e->node_scratch_mem[n] += sim_job_role_mem(j, r);
        if (e->node_cpu_used[n] + e->node_scratch_cpu[n] > e->node_cpu_total[n])
            st = fail(out, id, what,
                      "%s: node %s has %llu milli-CPU free, the placement "
                      "needs %llu",
                      role, e->node_name[n],
                      (unsigned long long)(e->node_cpu_total[n] - e->node_cpu_used[n]),
                      (unsigned long long)e->node_scratch_cpu[n]);
        else if (e->node_mem_used[n] + e->node_scratch_mem[n] > e->node_mem_total[n])
            st = fail(out, id, what,
                      "%s: node %s has %llu MiB of memory free, the "
                      "placement needs %llu",
                      role, e->node_name[n],
                      (unsigned long long)(e->node_mem_total[n] - e->node_mem_used[n]),
                      (unsigned long long)e->node_scratch_mem[n]);
    }
    for (uint32_t r = 0; r < p->replicas; r++)
        e->node_scratch_cpu[p->nodes[r]] = e->node_scratch_mem[p->nodes[r]] = 0;
    for (uint32_t r = 0; r < r_done; r++)
        if (p->role_nodes[r] < e->n_nodes)
            e->node_scratch_cpu[p->role_nodes[r]] = e->node_scratch_mem[p->role_nodes[r]] = 0;
    return st;
}

/* Hold the roles of a validated placement: one allocation each, without GPU, chained
 * from j->role_head in role order. */
static void apply_roles(sim_engine *e, sim_job_id id, const sim_placement *p)
{
    sim_job *j = &e->jobs[id];
    uint32_t *tailp = &j->role_head;
    for (uint32_t r = 0; r < j->n_roles; r++) {
        uint32_t n = p->role_nodes[r];
        uint32_t a = take_alloc(e);
        sim_alloc_rec *rec = &e->allocs[a];
        rec->job = id;
        rec->node = n;
        rec->replica = r;
        rec->gpu = SIM_GPU_NONE;
        rec->milli = 0;
        rec->gpu_mem_mib = 0;
        rec->demand = 0;
        rec->cpu_milli = sim_job_role_cpu(j, r);
        rec->mem_mib = sim_job_role_mem(j, r);
        rec->prev_on_gpu = rec->next_on_gpu = NIL;
        rec->next_in_job = NIL;
        e->node_cpu_used[n] += rec->cpu_milli;
        e->node_mem_used[n] += rec->mem_mib;
        e->cpu_used_all += rec->cpu_milli;
        *tailp = a;
        tailp = &rec->next_in_job;
        sim__node_refresh(e, n);
    }
}

static uint32_t take_alloc(sim_engine *e)
{
    if (e->alloc_free == NIL && sim__grow_allocs(e) != SIM_OK)
        return NIL;
    uint32_t a = e->alloc_free;
    e->alloc_free = e->allocs[a].next_in_job;
    e->n_alloc_free--;
    return a;
}

/* Make sure `n` allocation records are available, so applying cannot fail halfway. */
static int reserve_allocs(sim_engine *e, uint32_t n)
{
    while (e->n_alloc_free < n) {
        int st = sim__grow_allocs(e);
        if (st != SIM_OK)
            return st;
    }
    return SIM_OK;
}

/* Apply replicas first..first+count-1 of a validated placement; allocation records
 * are appended after the job's existing ones, in replica then GPU order. */
static void apply(sim_engine *e, sim_job_id id, uint32_t first, uint32_t count,
                  const sim_placement *p, uint32_t milli, uint64_t gmem)
{
    sim_job *j = &e->jobs[id];
    uint32_t gpr = j->gpus_per_replica;
    uint32_t *tailp = &j->alloc_head;
    while (*tailp != NIL)
        tailp = &e->allocs[*tailp].next_in_job;
    bool running = j->state == SIM_JOB_RUNNING;
    for (uint32_t r = 0; r < count; r++) {
        uint32_t n = p->nodes[r];
        uint32_t slots = gpr ? gpr : 1;
        for (uint32_t k = 0; k < slots; k++) {
            uint32_t a = take_alloc(e);
            sim_alloc_rec *rec = &e->allocs[a];
            rec->job = id;
            rec->node = n;
            rec->replica = first + r;
            rec->cpu_milli = k == 0 ? j->cpu_per_replica : 0;
            rec->mem_mib = k == 0 ? j->mem_per_replica : 0;
            rec->next_in_job = NIL;
            e->node_cpu_used[n] += rec->cpu_milli;
            e->node_mem_used[n] += rec->mem_mib;
            e->cpu_used_all += rec->cpu_milli;
            if (gpr) {
                uint32_t g = p->gpus[r * gpr + k];
                rec->gpu = g;
                rec->milli = milli;
                rec->gpu_mem_mib = gmem;
                rec->demand = sim__job_demand(e, j, n);
                e->gpu_used_milli[g] += milli;
                e->gpu_used_mem[g] += gmem;
                e->node_used_milli[n] += milli;
                e->tenant_used_milli[j->spec.tenant] += milli;
                e->used_milli_total += milli;
                if (running)
                    e->eff_milli_total += eff_milli(rec, milli);
                dirty_neighbours(e, g, id);
                gpu_link(e, a);
            } else {
                rec->gpu = SIM_GPU_NONE;
                rec->milli = 0;
                rec->gpu_mem_mib = 0;
                rec->demand = 0;
                rec->prev_on_gpu = rec->next_on_gpu = NIL;
            }
            *tailp = a;
            tailp = &rec->next_in_job;
        }
        sim__node_refresh(e, n);
    }
}

int sim_decide_start(policy_decisions *out, sim_job_id id, const sim_placement *p)
{
    static const char what[] = "START";
    sim_engine *e = out->e;
    sim_job *j = job_for(out, id, what);
    if (!j)
        return SIM_EINVAL;
    if (j->state != SIM_JOB_PENDING)
        return fail(out, id, what, "the job is %s, not pending", state_name(j->state));
    uint32_t lo, hi;
    bool elastic = elastic_bounds(j, &lo, &hi);
    if (!p || (!elastic && p->replicas != j->nominal_replicas))
        return fail(out, id, what, "the placement has %u replicas, the job has %u",
                    p ? p->replicas : 0, j->nominal_replicas);
    if (elastic && (p->replicas < lo || p->replicas > hi))
        return fail(out, id, what, "the placement has %u replicas, the job allows %u..%u",
                    p->replicas, lo, hi);
    uint32_t milli = p->milli ? p->milli : j->spec.gpu_milli;
    if (j->gpus_per_replica && (milli < 1 || milli > SIM_MILLI_GPU))
        return fail(out, id, what, "share %u milli-GPU is outside 1..1000", milli);
    uint64_t gmem = p->gpu_mem_mib == UINT64_MAX ? j->spec.gpu_mem_mib : p->gpu_mem_mib;
    if (!j->gpus_per_replica) {
        milli = 0;
        gmem = 0;
    }
    int st = validate(out, id, what, p->replicas, p, milli, gmem);
    if (st == SIM_OK && j->n_roles)
        st = validate_roles(out, id, what, p);
    if (st != SIM_OK)
        return st;
    uint32_t need = p->replicas * (j->gpus_per_replica ? j->gpus_per_replica : 1) + j->n_roles;
    if (reserve_allocs(e, need) != SIM_OK)
        return engine_fail(out, SIM_ENOMEM);
    sim__job_touch(e, id);
    sim__list_remove(e, id, false);
    if (j->n_roles)
        apply_roles(e, id, p);
    j->state = SIM_JOB_RUNNING;
    sim__rep_account(e, j, p->replicas);
    j->replicas = p->replicas;
    j->share_milli = milli;
    j->share_mem_mib = gmem;
    apply(e, id, 0, p->replicas, p, milli, gmem);
    if (j->first_start_us == SIM_TIME_NEVER)
        j->first_start_us = e->now;
    else
        j->work_total_s += e->cfg.restart_penalty_s;
    j->last_start_us = e->now;
    j->ckpt_work_s = j->work_done_s;
    j->ckpt_gpu_s = j->placed_gpu_s;
    e->seg_point[id] = e->points;
    sim__list_append(e, id, true);
    sim__mark_dirty(e, id);
    return SIM_OK;
}

int sim_decide_preempt(policy_decisions *out, sim_job_id id, bool checkpoint)
{
    static const char what[] = "PREEMPT";
    sim_job *j = job_for(out, id, what);
    if (!j)
        return SIM_EINVAL;
    if (j->state != SIM_JOB_RUNNING && j->state != SIM_JOB_PAUSED)
        return fail(out, id, what, "the job is %s, not placed", state_name(j->state));
    sim__requeue(out->e, id, checkpoint, true);
    return SIM_OK;
}

int sim_decide_set_share(policy_decisions *out, sim_job_id id, uint32_t milli)
{
    static const char what[] = "SET_SHARE";
    sim_engine *e = out->e;
    sim_job *j = job_for(out, id, what);
    if (!j)
        return SIM_EINVAL;
    if (j->state != SIM_JOB_RUNNING && j->state != SIM_JOB_PAUSED)
        return fail(out, id, what, "the job is %s, not placed", state_name(j->state));
    if (!j->gpus_per_replica)
        return fail(out, id, what, "the job holds no GPU");
    if (milli < 1 || milli > SIM_MILLI_GPU)
        return fail(out, id, what, "share %u milli-GPU is outside 1..1000", milli);
    uint32_t old = j->share_milli;
    if (milli > old) {
        for (uint32_t a = j->alloc_head; a != NIL; a = e->allocs[a].next_in_job) {
            uint32_t g = e->allocs[a].gpu;
            uint32_t freem = SIM_MILLI_GPU - e->gpu_used_milli[g];
            if (freem < milli - old)
                return fail(out, id, what, "GPU %u has %u milli-GPU free, growing the share "
                            "from %u to %u needs %u", g, freem, old, milli, milli - old);
        }
    }
    sim__mark_dirty(e, id);
    bool running = j->state == SIM_JOB_RUNNING;
    for (uint32_t a = j->alloc_head; a != NIL; a = e->allocs[a].next_in_job) {
        sim_alloc_rec *r = &e->allocs[a];
        e->gpu_used_milli[r->gpu] = e->gpu_used_milli[r->gpu] - old + milli;
        e->node_used_milli[r->node] = e->node_used_milli[r->node] - old + milli;
        e->tenant_used_milli[j->spec.tenant] = e->tenant_used_milli[j->spec.tenant] - old + milli;
        e->used_milli_total = e->used_milli_total - old + milli;
        if (running)
            e->eff_milli_total = e->eff_milli_total - eff_milli(r, old) + eff_milli(r, milli);
        r->milli = milli;
        dirty_neighbours(e, r->gpu, id);
        if (milli < old)
            sim__note_release(e, r->node);
        if (r->next_in_job == NIL || e->allocs[r->next_in_job].node != r->node)
            sim__node_refresh(e, r->node);
    }
    j->share_milli = milli;
    return SIM_OK;
}

int sim_decide_grow(policy_decisions *out, sim_job_id id, const sim_placement *p)
{
    static const char what[] = "GROW";
    sim_engine *e = out->e;
    sim_job *j = job_for(out, id, what);
    if (!j)
        return SIM_EINVAL;
    if (j->state != SIM_JOB_RUNNING && j->state != SIM_JOB_PAUSED)
        return fail(out, id, what, "the job is %s, not placed", state_name(j->state));
    uint32_t lo, hi;
    if (!elastic_bounds(j, &lo, &hi))
        return fail(out, id, what, "the job is not elastic (no min_replicas/max_replicas)");
    if (!p || p->replicas == 0 || j->replicas + p->replicas > hi)
        return fail(out, id, what, "growing %u replicas by %u exceeds max_replicas %u",
                    j->replicas, p ? p->replicas : 0, hi);
    int st = validate(out, id, what, p->replicas, p, j->share_milli, j->share_mem_mib);
    if (st != SIM_OK)
        return st;
    /* Two replicas of one job never share a GPU, as within a START's placement. */
    for (uint32_t a = j->alloc_head; a != NIL && j->gpus_per_replica; a = e->allocs[a].next_in_job)
        for (uint32_t k = 0; k < p->replicas * j->gpus_per_replica; k++)
            if (p->gpus[k] == e->allocs[a].gpu)
                return fail(out, id, what, "GPU %u already holds a replica of the job", p->gpus[k]);
    uint32_t need = p->replicas * (j->gpus_per_replica ? j->gpus_per_replica : 1);
    if (reserve_allocs(e, need) != SIM_OK)
        return engine_fail(out, SIM_ENOMEM);
    sim__mark_dirty(e, id);
    apply(e, id, j->replicas, p->replicas, p, j->share_milli, j->share_mem_mib);
    sim__rep_account(e, j, j->replicas + p->replicas);
    j->replicas += p->replicas;
    j->scale_events++;
    e->sum.scale_events++;
    return SIM_OK;
}

static int shrink(policy_decisions *out, sim_job_id id, uint32_t count, bool restart)
{
    const char *what = restart ? "SCALE_IN" : "SHRINK";
    sim_engine *e = out->e;
    sim_job *j = job_for(out, id, what);
    if (!j)
        return SIM_EINVAL;
    if (j->state != SIM_JOB_RUNNING && j->state != SIM_JOB_PAUSED)
        return fail(out, id, what, "the job is %s, not placed", state_name(j->state));
    uint32_t lo, hi;
    if (!elastic_bounds(j, &lo, &hi))
        return fail(out, id, what, "the job is not elastic (no min_replicas/max_replicas)");
    if (count == 0 || count > j->replicas || j->replicas - count < lo)
        return fail(out, id, what, "shrinking %u replicas by %u goes below min_replicas %u",
                    j->replicas, count, lo);
    sim__mark_dirty(e, id);
    if (restart) {
        /* Back to the last periodic checkpoint (none: the start of the segment), and
         * the restart's overhead, as at every restart. The loss is part of the run's
         * (the sum of the jobs' column), and reported on its own as the scale-in loss. */
        sim__job_touch(e, id);
        e->sum.scale_lost_work_s += lose_since_checkpoint(e, j);
        j->work_total_s += e->cfg.restart_penalty_s;
        j->last_start_us = e->now;
        sim__note_loss(e, j);
        sim__work_changed(e, id); /* its finish moves even where its speed does not */
    }
    uint32_t keep = j->replicas - count;
    sim__rep_account(e, j, keep);
    j->scale_events++;
    e->sum.scale_events++;
    uint32_t *link = &j->alloc_head;
    while (*link != NIL) {
        uint32_t a = *link;
        if (e->allocs[a].replica >= keep) {
            uint32_t node = e->allocs[a].node;
            *link = e->allocs[a].next_in_job;
            release_one(e, j, a);
            sim__node_refresh(e, node);
        } else {
            link = &e->allocs[a].next_in_job;
        }
    }
    j->replicas = keep;
    return SIM_OK;
}

int sim_decide_shrink(policy_decisions *out, sim_job_id id, uint32_t count)
{
    return shrink(out, id, count, false);
}

int sim_decide_scale_in(policy_decisions *out, sim_job_id id, uint32_t count)
{
    return shrink(out, id, count, true);
}

int sim_decide_pause(policy_decisions *out, sim_job_id id)
{
    static const char what[] = "PAUSE";
    sim_engine *e = out->e;
    sim_job *j = job_for(out, id, what);
    if (!j)
        return SIM_EINVAL;
    if (j->state != SIM_JOB_RUNNING)
        return fail(out, id, what, "the job is %s, not running", state_name(j->state));
    sim__mark_dirty(e, id);
    e->eff_milli_total -= job_eff_milli(e, j);
    j->state = SIM_JOB_PAUSED;
    return SIM_OK;
}

int sim_decide_resume(policy_decisions *out, sim_job_id id)
{
    static const char what[] = "RESUME";
    sim_engine *e = out->e;
    sim_job *j = job_for(out, id, what);
    if (!j)
        return SIM_EINVAL;
    if (j->state != SIM_JOB_PAUSED)
        return fail(out, id, what, "the job is %s, not paused", state_name(j->state));
    sim__mark_dirty(e, id);
    j->state = SIM_JOB_RUNNING;
    e->eff_milli_total += job_eff_milli(e, j);
    return SIM_OK;
}

int sim_decide_speed_factor(policy_decisions *out, sim_job_id id, double f)
{
    static const char what[] = "SPEED_FACTOR";
    sim_job *j = job_for(out, id, what);
    if (!j)
        return SIM_EINVAL;
    if (!(f > 0) || !isfinite(f))
        return fail(out, id, what, "factor %g is not a positive number", f);
    /* The same factor changes nothing: the job's speed and finish stand, untouched. */
    if (f == j->speed_factor)
        return SIM_OK;
    if (j->state != SIM_JOB_PENDING)
        sim__mark_dirty(out->e, id);
    j->speed_factor = f;
    return SIM_OK;
}

int sim_decide_predict(policy_decisions *out, sim_job_id id, double duration_s, double milli)
{
    sim_job *j = job_for(out, id, "PREDICT");
    if (!j)
        return SIM_EINVAL;
    j->pred_duration_s = duration_s;
    j->pred_milli = milli;
    return SIM_OK;
}

int sim_decide_reject(policy_decisions *out, sim_job_id id, const char *reason)
{
    static const char what[] = "REJECT";
    sim_engine *e = out->e;
    sim_job *j = job_for(out, id, what);
    if (!j)
        return SIM_EINVAL;
    if (j->state != SIM_JOB_PENDING)
        return fail(out, id, what, "the job is %s, not pending", state_name(j->state));
    char msg[300];
    snprintf(msg, sizeof msg, "policy %s: %s", e->pol->name, reason ? reason : "");
    sim__job_touch(e, id);
    int wst = sim__write_job_row(e, j, "rejected", msg);
    if (wst != SIM_OK)
        return engine_fail(out, wst);
    sim__list_remove(e, id, false);
    e->tstats[j->spec.tenant].rejected++;
    sim__note_rejection(e, j->spec.id, msg);
    sim__group_member_end(e, id, false);
    e->job_dirty[id] = 0;
    e->job_version[id]++;
    j->state = SIM_JOB_FREE;
    e->job_next[id] = e->job_free;
    e->job_free = id;
    e->jobs_in_flight--;
    return SIM_OK;
}

/* ---- Invariants ----------------------------------------------------------------------- */

/* Quarter q's summary computed from its nodes afresh, as sim_view.block_* defines it. */
static sim_quarter_sum quarter_from_nodes(const sim_engine *e, uint32_t q)
{
    sim_quarter_sum s = {.max_cpu_frac = -1};
    for (uint32_t k = 0; k < SIM_FRAC_WHOLE + SIM_FRAC_SHARE; k++)
        s.frac[k] = -1;
    for (uint32_t n = q * SIM_NODE_QUARTER; n < (q + 1) * SIM_NODE_QUARTER && n < e->n_nodes; n++) {
        if (!e->node_up[n])
            continue;
        uint32_t cnt = e->node_gpu_count[n], fg = 0, fm = 0, used = 0;
        for (uint32_t g = e->node_gpu_first[n]; g < e->node_gpu_first[n] + cnt; g++) {
            fg += e->gpu_nres[g] == 0;
            fm = SIM_MILLI_GPU - e->gpu_used_milli[g] > fm ? SIM_MILLI_GPU - e->gpu_used_milli[g]
                                                           : fm;
            used += e->gpu_used_milli[g];
        }
        uint64_t cpu = e->node_cpu_total[n] - e->node_cpu_used[n];
        uint64_t mem = e->node_mem_total[n] - e->node_mem_used[n];
        double cf =
            e->node_cpu_total[n] ? (double)e->node_cpu_used[n] / (double)e->node_cpu_total[n] : 0;
        double f = cnt ? (double)used / (1000.0 * (double)cnt) : 0;
        s.max_free_gpus = fg > s.max_free_gpus ? fg : s.max_free_gpus;
        s.max_free_milli = fm > s.max_free_milli ? fm : s.max_free_milli;
        s.max_cpu_free = cpu > s.max_cpu_free ? cpu : s.max_cpu_free;
        s.max_mem_free = mem > s.max_mem_free ? mem : s.max_mem_free;
        s.max_cpu_frac = cf > s.max_cpu_frac ? cf : s.max_cpu_frac;
        s.types |= UINT64_C(1) << (cnt ? e->node_gpu_type[n] : 0);
        for (uint32_t k = 0; k < SIM_FRAC_WHOLE; k++)
            if (cnt && fg >= k + 1 && f > s.frac[k])
                s.frac[k] = f;
        for (uint32_t i = 0; i < SIM_FRAC_SHARE; i++)
            if (cnt && fm >= (i ? 100 * i : 1) && f > s.frac[SIM_FRAC_WHOLE + i])
                s.frac[SIM_FRAC_WHOLE + i] = f;
    }
    return s;
}

static bool same_sum(const sim_quarter_sum *a, const sim_quarter_sum *b)
{
    bool same = a->max_free_gpus == b->max_free_gpus && a->max_free_milli == b->max_free_milli &&
                a->max_cpu_free == b->max_cpu_free && a->max_mem_free == b->max_mem_free &&
                a->max_cpu_frac == b->max_cpu_frac && a->types == b->types;
    for (uint32_t k = 0; k < SIM_FRAC_WHOLE + SIM_FRAC_SHARE; k++)
        same = same && a->frac[k] == b->frac[k];
    return same;
}

/* Block b's summary as the view shows it. */
static sim_quarter_sum block_sum(const sim_engine *e, uint32_t b)
{
    sim_quarter_sum s = {.max_free_gpus = e->block_max_free_gpus[b],
                         .max_free_milli = e->block_max_free_milli[b],
                         .max_cpu_free = e->block_max_cpu_free[b],
                         .max_mem_free = e->block_max_mem_free[b],
                         .max_cpu_frac = e->block_max_cpu_frac[b],
                         .types = e->block_types[b]};
    memcpy(s.frac, e->block_frac_whole + (size_t)b * SIM_FRAC_WHOLE,
           SIM_FRAC_WHOLE * sizeof *s.frac);
    memcpy(s.frac + SIM_FRAC_WHOLE, e->block_frac_share + (size_t)b * SIM_FRAC_SHARE,
           SIM_FRAC_SHARE * sizeof *s.frac);
    return s;
}

/* The block summaries, brought up to date, against their nodes. */
static int check_blocks(const sim_engine *e, sim_diag *d)
{
    sim__sync_blocks(&e->v);
    for (uint32_t b = 0; b < e->n_blocks; b++) {
        sim_quarter_sum bs = quarter_from_nodes(e, 4 * b);
        for (uint32_t q = 0; q < 4; q++) {
            sim_quarter_sum x = quarter_from_nodes(e, 4 * b + q);
            if (!same_sum(&x, &e->quarter[4 * b + q]))
                return sim_diag_set(d, SIM_EINVAL, NULL, 0, 0,
                                    "the summary of nodes %u.. is not their nodes'",
                                    (4 * b + q) * SIM_NODE_QUARTER);
            sum_max(&bs, &x);
        }
        sim_quarter_sum shown = block_sum(e, b);
        if (!same_sum(&bs, &shown))
            return sim_diag_set(d, SIM_EINVAL, NULL, 0, 0,
                                "the summary of block %u is not its nodes'", b);
    }
    return SIM_OK;
}

int sim_engine_check(const sim_engine *e, sim_diag *d)
{
    uint32_t n_free = 0;
    for (uint32_t a = e->alloc_free; a != NIL && n_free <= e->alloc_cap;
         a = e->allocs[a].next_in_job)
        n_free++;
    if (n_free != e->n_alloc_free)
        return sim_diag_set(d, SIM_EINVAL, NULL, 0, 0,
                            "%u allocation records are free; the count says %u", n_free,
                            e->n_alloc_free);
    uint64_t total = 0;
    for (uint32_t g = 0; g < e->n_gpus; g++) {
        uint64_t milli = 0, mem = 0;
        uint32_t n = 0;
        for (uint32_t a = e->gpu_first_res[g]; a != NIL; a = e->allocs[a].next_on_gpu) {
            const sim_alloc_rec *r = &e->allocs[a];
            if (r->gpu != g)
                return sim_diag_set(d, SIM_EINVAL, NULL, 0, 0, "GPU %u lists a foreign allocation", g);
            for (uint32_t b = r->next_on_gpu; b != NIL; b = e->allocs[b].next_on_gpu)
                if (e->allocs[b].job == r->job)
                    return sim_diag_set(d, SIM_EINVAL, NULL, 0, 0,
                                        "GPU %u holds two allocations of job '%s'", g,
                                        e->jobs[r->job].spec.id);
            milli += r->milli;
            mem += r->gpu_mem_mib;
            n++;
        }
        if (milli != e->gpu_used_milli[g] || milli > SIM_MILLI_GPU || mem != e->gpu_used_mem[g] ||
            mem > e->gpu_mem_total[g] || n != e->gpu_nres[g])
            return sim_diag_set(d, SIM_EINVAL, NULL, 0, 0,
                                "GPU %u: residents hold %llu milli / %llu MiB (%u), accounted %u "
                                "milli / %llu MiB (%u), capacity 1000 / %llu", g,
                                (unsigned long long)milli, (unsigned long long)mem, n,
                                e->gpu_used_milli[g], (unsigned long long)e->gpu_used_mem[g],
                                e->gpu_nres[g], (unsigned long long)e->gpu_mem_total[g]);
        total += milli;
    }
    if (total != e->used_milli_total)
        return sim_diag_set(d, SIM_EINVAL, NULL, 0, 0, "GPU shares sum to %llu, accounted %llu",
                            (unsigned long long)total, (unsigned long long)e->used_milli_total);
    for (uint32_t n = 0; n < e->n_nodes; n++) {
        uint64_t milli = 0;
        uint32_t freeg = 0;
        for (uint32_t g = e->node_gpu_first[n]; g < e->node_gpu_first[n] + e->node_gpu_count[n];
             g++) {
            milli += e->gpu_used_milli[g];
            freeg += e->gpu_nres[g] == 0;
        }
        if (milli != e->node_used_milli[n] || freeg != e->node_free_gpus[n] ||
            e->node_cpu_used[n] > e->node_cpu_total[n] ||
            e->node_mem_used[n] > e->node_mem_total[n])
            return sim_diag_set(d, SIM_EINVAL, NULL, 0, 0, "node %s accounting is inconsistent",
                                e->node_name[n]);
    }
    /* Per-node CPU/memory and per-tenant share from the jobs' own records. */
    uint64_t cpu_all = 0, tenant_all = 0;
    for (sim_job_id id = e->v.running_head; id != SIM_JOB_NONE; id = e->job_next[id]) {
        for (uint32_t a = e->jobs[id].alloc_head; a != NIL; a = e->allocs[a].next_in_job) {
            cpu_all += e->allocs[a].cpu_milli;
            tenant_all += e->allocs[a].milli;
            if (!e->node_up[e->allocs[a].node])
                return sim_diag_set(d, SIM_EINVAL, NULL, 0, 0, "job '%s' holds down node %s",
                                    e->jobs[id].spec.id, e->node_name[e->allocs[a].node]);
        }
        uint32_t roles = 0;
        for (uint32_t a = e->jobs[id].role_head; a != NIL; a = e->allocs[a].next_in_job) {
            cpu_all += e->allocs[a].cpu_milli;
            roles++;
        }
        if (roles != e->jobs[id].n_roles)
            return sim_diag_set(d, SIM_EINVAL, NULL, 0, 0, "job '%s' holds %u of its %u roles",
                                e->jobs[id].spec.id, roles, e->jobs[id].n_roles);
    }
    uint64_t tsum = 0;
    for (uint32_t t = 0; t < e->tenant_cap; t++)
        tsum += e->tenant_used_milli[t];
    if (cpu_all != e->cpu_used_all || tenant_all != tsum || tsum != e->used_milli_total)
        return sim_diag_set(d, SIM_EINVAL, NULL, 0, 0,
                            "running jobs hold %llu milli-CPU and %llu milli-GPU; accounted %llu "
                            "and %llu (tenants %llu)", (unsigned long long)cpu_all,
                            (unsigned long long)tenant_all, (unsigned long long)e->cpu_used_all,
                            (unsigned long long)e->used_milli_total, (unsigned long long)tsum);
    /* Last: the node summaries, derived from the state checked above. */
    return check_blocks(e, d) != SIM_OK ? SIM_EINVAL : SIM_OK;
}
