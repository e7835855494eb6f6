/*
 * refscore.c: the reference simulator's node scores, computed in the same floating-point
 * operations in the same order, then truncated as Go's int64() conversion does.
 */
#include "policies/refscore.h"

#include "policies/frag.h"
#include "base/alloc.h"
#include "sim/types.h"

#include <math.h>
#include <stdlib.h>

#define REF_MILLI 1000u

uint64_t ref_gpu_left(const ref_node *n)
{
    uint64_t t = 0;
    for (uint32_t g = 0; g < n->n_gpus; g++)
        t += n->gpu_left[g];
    return t;
}

int64_t ref_dotprod_score(const ref_node *n, const ref_pod *p)
{
    if (n->cpu_left < p->cpu)
        return 0;
    double node_v[2] = {(double)n->cpu_left / REF_MAX_CPU, (double)ref_gpu_left(n) / REF_MAX_GPU};
    double pod_v[2] = {(double)p->cpu / REF_MAX_CPU,
                       (double)((uint64_t)p->milli * p->gpus) / REF_MAX_GPU};
    double dot = 0;
    for (int i = 0; i < 2; i++)
        dot += node_v[i] * pod_v[i];
    dot /= 2.0;
    double score = 1 - dot;
    return (int64_t)((double)REF_MAX_SCORE * score);
}

int64_t ref_bestfit_score(const ref_node *n, const ref_pod *p)
{
    double free_v[2] = {(double)n->cpu_left, (double)ref_gpu_left(n)};
    double req_v[2] = {(double)p->cpu, (double)((uint64_t)p->milli * p->gpus)};
    const double max_v[2] = {REF_MAX_CPU, REF_MAX_GPU};
    double score = 0;
    for (int i = 0; i < 2; i++) {
        if (free_v[i] < req_v[i])
            return -1;
        score += (free_v[i] - req_v[i]) / max_v[i] * 0.5;
    }
    score = (1.0 - score) * (double)REF_MAX_SCORE;
    return (int64_t)score;
}

int64_t ref_gpupacking_score(const ref_node *n, const ref_pod *p)
{
    if (p->gpus == 0 || p->milli == 0)
        return 0;
    uint32_t idle = 0;
    for (uint32_t g = 0; g < n->n_gpus; g++)
        idle += n->gpu_left[g] == REF_MILLI;
    if (idle == n->n_gpus) {
        int64_t score = REF_MAX_SCORE / 3 - (int64_t)idle;
        return score > (int64_t)idle ? score : (int64_t)idle;
    }
    /* GPUs least free first, stable on device order (at most 64 per node here). */
    uint32_t order[64], k = n->n_gpus < 64 ? n->n_gpus : 64;
    for (uint32_t i = 0; i < k; i++) {
        uint32_t x = i, j = i;
        while (j > 0 && n->gpu_left[order[j - 1]] > n->gpu_left[x]) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = x;
    }
    uint32_t req = p->gpus, idle_used = 0, used[64], n_used = 0;
    for (uint32_t i = 0; i < k && req > 0; i++) {
        uint32_t left = n->gpu_left[order[i]];
        if (p->milli <= left) {
            req--;
            used[n_used++] = order[i];
            idle_used += left == REF_MILLI;
        }
    }
    if (req)
        return -1;
    if (idle_used > 0) {
        int64_t score = REF_MAX_SCORE / 2 - (int64_t)idle_used;
        return score > REF_MAX_SCORE / 3 ? score : REF_MAX_SCORE / 3;
    }
    int64_t ratio = 0;
    for (uint32_t i = 0; i < n_used; i++)
        ratio += (int64_t)n->gpu_left[used[i]] * 100 / REF_MILLI;
    int64_t score = REF_MAX_SCORE - ratio / 10;
    return score > REF_MAX_SCORE / 2 ? score : REF_MAX_SCORE / 2;
}

uint64_t ref_affinity_bit(uint32_t gpus, uint32_t milli)
{
    if (gpus == 0 || milli == 0)
        return 0;
    if (gpus == 1 && milli < REF_MILLI)
        return 1;
    return gpus < 64 ? UINT64_C(1) << gpus : UINT64_C(1) << 63;
}

int64_t ref_gpuclustering_score(uint64_t mask, uint64_t bit, uint64_t gpu_left)
{
    if (!bit)
        return 0;
    int64_t fill =
        REF_MAX_SCORE / 4 * ((int64_t)REF_MAX_GPU - (int64_t)gpu_left) / (int64_t)REF_MAX_GPU;
    if (mask & bit)
        return fill + (mask == bit ? REF_MAX_SCORE * 3 / 4 : REF_MAX_SCORE * 2 / 4);
    return fill + (mask == 0 ? REF_MAX_SCORE / 4 : 0);
}

int64_t ref_fgd_score(double frag_delta_milli)
{
    double x = -frag_delta_milli / 1000;
    double sig = 1.0 / (1.0 + exp(-x));
    return (int64_t)(sig * (double)REF_MAX_SCORE);
}

void ref_normalize(int64_t *scores, uint32_t n)
{
    int64_t hi = INT64_MIN, lo = INT64_MAX;
    for (uint32_t i = 0; i < n; i++) {
        if (scores[i] > hi)
            hi = scores[i];
        if (scores[i] < lo)
            lo = scores[i];
    }
    int64_t range = hi - lo;
    for (uint32_t i = 0; i < n; i++)
        scores[i] = range == 0 ? 0 : (scores[i] - lo) * REF_MAX_SCORE / range;
}

typedef struct typical {
    frag_shape s;
    uint64_t count;
} typical;

/* Decreasing count; ties: the reverse of the reference's PodResource.Less. */
static int cmp_typical(const void *pa, const void *pb)
{
    const typical *a = pa, *b = pb;
    if (a->count != b->count)
        return a->count > b->count ? -1 : 1;
    if (a->s.cpu_milli != b->s.cpu_milli)
        return a->s.cpu_milli > b->s.cpu_milli ? -1 : 1;
    if (a->s.milli != b->s.milli)
        return a->s.milli > b->s.milli ? -1 : 1;
    if (a->s.gpus != b->s.gpus)
        return a->s.gpus > b->s.gpus ? -1 : 1;
    if (a->s.type_mask != b->s.type_mask)
        return a->s.type_mask > b->s.type_mask ? -1 : 1;
    return 0;
}

int ref_typical_workload(const frag_workload *all, uint32_t n_gpu_types, frag_workload **out)
{
    *out = NULL;
    /* Merge the shapes without memory through a scratch workload, then sort them. */
    frag_workload *merged = NULL;
    int st = frag_workload_create(&merged, n_gpu_types);
    uint32_t n = frag_workload_shapes(all);
    for (uint32_t i = 0; i < n && st == SIM_OK; i++) {
        frag_shape s;
        uint64_t c;
        frag_workload_get(all, i, &s, &c);
        s.mem_mib = 0;
        st = frag_workload_add(merged, &s, c);
    }
    uint32_t m = merged ? frag_workload_shapes(merged) : 0;
    typical *t = st == SIM_OK ? sim_calloc(m ? m : 1, sizeof *t) : NULL;
    if (!t) {
        frag_workload_destroy(merged);
        return st == SIM_OK ? SIM_ENOMEM : st;
    }
    uint64_t total = 0;
    for (uint32_t i = 0; i < m; i++) {
        frag_workload_get(merged, i, &t[i].s, &t[i].count);
        total += t[i].count;
    }
    frag_workload_destroy(merged);
    qsort(t, m, sizeof *t, cmp_typical);
    st = frag_workload_create(out, n_gpu_types);
    /* Shapes one at a time until they cover 95 % of the tasks (cum < 0.95 x total,
     * compared in integers: 100 x cum < 95 x total). */
    uint64_t cum = 0;
    for (uint32_t i = 0; i < m && st == SIM_OK && 100 * cum < 95 * total; i++) {
        cum += t[i].count;
        st = frag_workload_add(*out, &t[i].s, t[i].count);
    }
    sim_free(t);
    if (st != SIM_OK) {
        frag_workload_destroy(*out);
        *out = NULL;
    }
    return st;
}
