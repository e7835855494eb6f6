/*
 * place.c: feasibility and gang placement over the view's struct-of-arrays. The common
 * case, one replica, touches no tentative state; multi-replica jobs record what each
 * chosen replica takes so the next replica sees it, and undo it at the end.
 */
#include "policies/place.h"

#include "sim/alloc.h"

#include <gsl/gsl_rng.h>
#include <string.h>

int place_ws_init(place_ws *w, const policy_config *cfg, sim_diag *d)
{
    memset(w, 0, sizeof *w);
    w->n_nodes = cfg->n_nodes;
    w->n_gpus = cfg->n_gpus;
    w->max_slots = cfg->n_gpus > cfg->n_nodes ? cfg->n_gpus : cfg->n_nodes;
    if (w->max_slots < 1)
        w->max_slots = 1;
    w->t_cpu = sim_calloc(w->n_nodes, sizeof *w->t_cpu);
    w->t_mem = sim_calloc(w->n_nodes, sizeof *w->t_mem);
    w->t_node = sim_calloc(w->n_nodes, sizeof *w->t_node);
    w->t_milli = sim_calloc(w->n_gpus, sizeof *w->t_milli);
    w->t_gmem = sim_calloc(w->n_gpus, sizeof *w->t_gmem);
    w->nodes = sim_calloc(w->max_slots, sizeof *w->nodes);
    w->gpus = sim_calloc(w->max_slots, sizeof *w->gpus);
    w->cand = sim_calloc(w->max_slots, sizeof *w->cand);
    if (!w->t_cpu || !w->t_mem || !w->t_node || !w->t_milli || !w->t_gmem || !w->nodes ||
        !w->gpus || !w->cand) {
        place_ws_fini(w);
        return sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    }
    return SIM_OK;
}

void place_ws_fini(place_ws *w)
{
    sim_free(w->t_cpu);
    sim_free(w->t_mem);
    sim_free(w->t_node);
    sim_free(w->t_milli);
    sim_free(w->t_gmem);
    sim_free(w->nodes);
    sim_free(w->gpus);
    sim_free(w->cand);
    memset(w, 0, sizeof *w);
}

uint32_t place_milli(const sim_job *j, uint32_t milli)
{
    return milli ? milli : j->spec.gpu_milli;
}

uint64_t place_gmem(const sim_job *j, uint64_t gmem)
{
    return gmem == UINT64_MAX ? j->spec.gpu_mem_mib : gmem;
}

static inline bool gpu_fits(const place_ws *w, const sim_view *v, uint32_t g, uint32_t milli,
                            uint64_t gmem, bool tent)
{
    /* A GPU an earlier replica of the same job took is not offered again: the core
     * refuses a placement that names one GPU twice, even when the shares would fit. */
    if (tent && w->t_milli[g])
        return false;
    uint32_t used = v->gpu_used_milli[g];
    uint64_t umem = v->gpu_used_mem[g];
    return used + milli <= SIM_MILLI_GPU && umem + gmem <= v->gpu_mem_total[g];
}

bool place_fits(const place_ws *w, const sim_view *v, const sim_job *j, uint32_t n,
                uint32_t milli, uint64_t gmem)
{
    if (!v->node_up[n])
        return false;
    bool tent = w->t_node[n];
    uint64_t tc = tent ? w->t_cpu[n] : 0, tm = tent ? w->t_mem[n] : 0;
    if (v->node_cpu_used[n] + tc + j->cpu_per_replica > v->node_cpu_total[n] ||
        v->node_mem_used[n] + tm + j->mem_per_replica > v->node_mem_total[n])
        return false;
    uint32_t need = j->gpus_per_replica;
    if (!need)
        return true;
    if (v->node_gpu_count[n] < need || !sim_job_type_ok(j, v->node_gpu_type[n]) ||
        v->node_max_free_milli[n] < milli)
        return false;
    if (!tent && milli == SIM_MILLI_GPU && gmem == 0)
        return v->node_free_gpus[n] >= need;
    uint32_t first = v->node_gpu_first[n], end = first + v->node_gpu_count[n], ok = 0;
    for (uint32_t g = first; g < end && ok < need; g++)
        ok += gpu_fits(w, v, g, milli, gmem, tent);
    return ok >= need;
}

bool place_pick_gpus(place_ws *w, const sim_view *v, const sim_job *j, uint32_t n,
                     uint32_t milli, uint64_t gmem, place_gpu_order order, uint32_t *out)
{
    uint32_t need = j->gpus_per_replica;
    bool tent = w->t_node[n];
    uint32_t first = v->node_gpu_first[n], end = first + v->node_gpu_count[n], k = 0;
    for (uint32_t g = first; g < end; g++)
        if (gpu_fits(w, v, g, milli, gmem, tent))
            w->cand[k++] = g;
    if (k < need)
        return false;
    if (order == PLACE_GPU_RANDOM) {
        /* Partial Fisher-Yates: the first `need` candidates become a uniform sample. */
        for (uint32_t i = 0; i < need; i++) {
            uint32_t r = i + (uint32_t)gsl_rng_uniform_int(v->rng, k - i);
            uint32_t t = w->cand[i];
            w->cand[i] = w->cand[r];
            w->cand[r] = t;
        }
    } else if (order != PLACE_GPU_FIRST) {
        /* Selection of the `need` best by used share; stable on GPU index. */
        for (uint32_t i = 0; i < need; i++) {
            uint32_t best = i;
            for (uint32_t c = i + 1; c < k; c++) {
                uint32_t uc = v->gpu_used_milli[w->cand[c]] + (tent ? w->t_milli[w->cand[c]] : 0);
                uint32_t ub = v->gpu_used_milli[w->cand[best]] +
                              (tent ? w->t_milli[w->cand[best]] : 0);
                bool better = order == PLACE_GPU_MOST_USED ? uc > ub : uc < ub;
                if (better || (uc == ub && w->cand[c] < w->cand[best]))
                    best = c;
            }
            uint32_t t = w->cand[i];
            w->cand[i] = w->cand[best];
            w->cand[best] = t;
        }
    }
    memcpy(out, w->cand, need * sizeof *out);
    return true;
}

static void add_tentative(place_ws *w, const sim_job *j, uint32_t n, const uint32_t *gpus,
                          uint32_t milli, uint64_t gmem)
{
    w->t_node[n] = 1;
    w->t_cpu[n] += j->cpu_per_replica;
    w->t_mem[n] += j->mem_per_replica;
    for (uint32_t k = 0; k < j->gpus_per_replica; k++) {
        w->t_milli[gpus[k]] += milli;
        w->t_gmem[gpus[k]] += gmem;
    }
}

static void clear_tentative(place_ws *w, const sim_job *j, uint32_t replicas)
{
    for (uint32_t r = 0; r < replicas; r++) {
        uint32_t n = w->nodes[r];
        w->t_node[n] = 0;
        w->t_cpu[n] = 0;
        w->t_mem[n] = 0;
        for (uint32_t k = 0; k < j->gpus_per_replica; k++) {
            uint32_t g = w->gpus[r * j->gpus_per_replica + k];
            w->t_milli[g] = 0;
            w->t_gmem[g] = 0;
        }
    }
}

bool place_gang(place_ws *w, const sim_view *v, sim_job_id id, uint32_t milli, uint64_t gmem,
                place_node_score score, void *ctx, place_gpu_order order, sim_placement *out)
{
    const sim_job *j = sim_view_job(v, id);
    uint32_t m = place_milli(j, milli);
    uint64_t gm = place_gmem(j, gmem);
    uint32_t R = j->nominal_replicas, gpr = j->gpus_per_replica;
    if (!gpr)
        m = 0, gm = 0;
    if ((uint64_t)R * (gpr ? gpr : 1) > w->max_slots || R > w->max_slots)
        return false;
    uint32_t placed = 0;
    bool ok = true;
    for (uint32_t r = 0; r < R; r++) {
        uint32_t best = UINT32_MAX, seen = 0;
        double best_score = 0;
        for (uint32_t n = 0; n < v->n_nodes; n++) {
            if (!place_fits(w, v, j, n, m, gm))
                continue;
            if (!score) {
                /* Reservoir sampling: each fitting node is kept with probability 1/seen. */
                seen++;
                if (gsl_rng_uniform_int(v->rng, seen) == 0)
                    best = n;
                continue;
            }
            double s = score(ctx, v, j, n);
            if (best == UINT32_MAX || s > best_score) {
                best = n;
                best_score = s;
            }
        }
        if (best == UINT32_MAX ||
            (gpr && !place_pick_gpus(w, v, j, best, m, gm, order, w->gpus + r * gpr))) {
            ok = false;
            break;
        }
        w->nodes[r] = best;
        placed++;
        if (R > 1)
            add_tentative(w, j, best, w->gpus + r * gpr, m, gm);
    }
    if (R > 1)
        clear_tentative(w, j, placed);
    if (!ok)
        return false;
    out->replicas = R;
    out->nodes = w->nodes;
    out->gpus = gpr ? w->gpus : NULL;
    out->milli = gpr ? m : 0;
    out->gpu_mem_mib = gm;
    return true;
}

double place_score_most_allocated(void *ctx, const sim_view *v, const sim_job *j, uint32_t n)
{
    (void)ctx;
    if (j->gpus_per_replica)
        return (double)v->node_used_milli[n] / (1000.0 * (double)v->node_gpu_count[n]);
    return v->node_cpu_total[n] ? (double)v->node_cpu_used[n] / (double)v->node_cpu_total[n] : 0;
}

int place_pass_run(place_pass *pp, place_ws *w, const sim_view *v, policy_decisions *out,
                   uint32_t milli, place_node_score score, void *ctx, place_gpu_order order,
                   bool strict)
{
    bool fresh = !pp->primed || v->release_epoch != pp->epoch;
    bool stopped = false;
    uint64_t upto = pp->enqueued_upto;
    for (sim_job_id id = v->pending_head; id != SIM_JOB_NONE;) {
        const sim_job *j = sim_view_job(v, id);
        sim_job_id next = j->list_next;
        if (j->enqueue_seq >= pp->enqueued_upto)
            pp->enqueued_upto = j->enqueue_seq + 1;
        if (!fresh && j->enqueue_seq < upto) {
            if (strict) {
                stopped = true;
                break;
            }
            id = next;
            continue;
        }
        sim_placement p;
        if (place_gang(w, v, id, milli, UINT64_MAX, score, ctx, order, &p)) {
            int st = sim_decide_start(out, id, &p);
            if (st != SIM_OK)
                return st;
        } else if (strict) {
            stopped = true;
            break;
        }
        id = next;
    }
    /* A strict pass that stopped early has still seen the jobs behind the blocked one:
     * they cannot start before it does. */
    for (sim_job_id id = stopped ? v->pending_head : SIM_JOB_NONE; id != SIM_JOB_NONE;
         id = sim_view_next(v, id))
        if (sim_view_job(v, id)->enqueue_seq >= pp->enqueued_upto)
            pp->enqueued_upto = sim_view_job(v, id)->enqueue_seq + 1;
    pp->primed = true;
    pp->epoch = v->release_epoch;
    return SIM_OK;
}
