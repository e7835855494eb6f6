/*
 * frag.c: the target workload (shapes merged through an open-addressing index) and the
 * fragmentation of nodes and clusters (Weng et al., USENIX ATC 2023, §3).
 *
 * Evaluation: for each GPU type the workload keeps the GPU shapes allowed on it sorted
 * by share per GPU. A node's fragmentation is total x T minus, for every shape that
 * fits, count x (free share of the GPUs with at least the shape's share), where T is
 * the node's free share. With the node's free shares sorted ascending, one forward
 * pointer gives "GPUs with at least d free" for every shape in turn, so a node costs
 * O(shapes + GPUs). Counts are read through the shape index, so adding a task of a
 * known shape touches one counter.
 */
#include "policies/frag.h"

#include "base/alloc.h"

#include <string.h>

void frag_shape_of_job(const job_spec *spec, uint32_t replicas, frag_shape *out)
{
    uint32_t r = replicas ? replicas : 1;
    memset(out, 0, sizeof *out);
    out->cpu_milli = (spec->cpu_milli + r - 1) / r;
    out->mem_mib = (spec->mem_mib + r - 1) / r;
    out->gpus = spec->num_gpus / r;
    out->milli = out->gpus ? (spec->gpu_milli ? spec->gpu_milli : SIM_MILLI_GPU) : 0;
    out->type_mask = out->gpus ? spec->gpu_type_mask : 0;
}

uint32_t frag_replicas_of_job(const job_spec *spec, uint32_t max_gpus)
{
    uint32_t g = spec->num_gpus;
    if (spec->replicas)
        return g % spec->replicas == 0 ? spec->replicas : 1;
    if (g == 0 || max_gpus == 0)
        return 1;
    uint32_t r = (g + max_gpus - 1) / max_gpus;
    while (g % r || g / r > max_gpus)
        r++;
    return r;
}

/* ---- The target workload --------------------------------------------------------- */

typedef struct shape_rec {
    frag_shape s;
    uint64_t count;
} shape_rec;

/* A GPU shape in a type's list; `shape` indexes the counts. */
typedef struct type_entry {
    uint64_t cpu_milli, mem_mib;
    uint32_t gpus, milli;
    uint32_t shape;
} type_entry;

struct frag_workload {
    uint32_t n_types;
    uint32_t n, cap;     /* shapes, capacity of recs and of each type list */
    shape_rec *recs;
    uint32_t *index;     /* open addressing: shape id + 1, 0 = empty; index_cap slots */
    uint32_t index_cap;  /* power of two, at least 2 x cap */
    type_entry *lists;   /* n_types lists of cap entries each */
    uint32_t *list_n;    /* entries per type */
    uint64_t total;
    uint64_t version;
};

int frag_workload_create(frag_workload **out, uint32_t n_gpu_types)
{
    *out = NULL;
    if (n_gpu_types > SIM_MAX_GPU_TYPES)
        return SIM_EINVAL;
    frag_workload *w = sim_calloc(1, sizeof *w);
    if (!w)
        return SIM_ENOMEM;
    w->n_types = n_gpu_types ? n_gpu_types : 1;
    w->list_n = sim_calloc(w->n_types, sizeof *w->list_n);
    if (!w->list_n) {
        sim_free(w);
        return SIM_ENOMEM;
    }
    *out = w;
    return SIM_OK;
}

void frag_workload_destroy(frag_workload *w)
{
    if (!w)
        return;
    sim_free(w->recs);
    sim_free(w->index);
    sim_free(w->lists);
    sim_free(w->list_n);
    sim_free(w);
}

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= UINT64_C(0xbf58476d1ce4e5b9);
    x ^= x >> 27;
    x *= UINT64_C(0x94d049bb133111eb);
    x ^= x >> 31;
    return x;
}

static uint64_t shape_hash(const frag_shape *s)
{
    uint64_t h = mix64(s->cpu_milli);
    h = mix64(h ^ s->mem_mib);
    h = mix64(h ^ (((uint64_t)s->gpus << 32) | s->milli));
    return mix64(h ^ s->type_mask);
}

static bool shape_eq(const frag_shape *a, const frag_shape *b)
{
    return a->cpu_milli == b->cpu_milli && a->mem_mib == b->mem_mib && a->gpus == b->gpus &&
           a->milli == b->milli && a->type_mask == b->type_mask;
}

static void index_insert(frag_workload *w, uint32_t id)
{
    uint32_t mask = w->index_cap - 1;
    uint32_t i = (uint32_t)shape_hash(&w->recs[id].s) & mask;
    while (w->index[i])
        i = (i + 1) & mask;
    w->index[i] = id + 1;
}

/* Grow the shape table, the index and every type list to hold at least one more shape. */
static int grow(frag_workload *w)
{
    uint32_t ncap = w->cap ? w->cap * 2 : 64;
    if (ncap <= w->cap || ncap > UINT32_MAX / 4)
        return SIM_ENOMEM;
    shape_rec *nr = sim_reallocarray(w->recs, ncap, sizeof *nr);
    if (!nr)
        return SIM_ENOMEM;
    w->recs = nr;
    size_t nl;
    if (!sim_mul_ok((size_t)w->n_types * ncap, sizeof(type_entry), &nl))
        return SIM_ENOMEM;
    type_entry *lists = sim_malloc(nl);
    uint32_t *index = sim_calloc((size_t)ncap * 2, sizeof *index);
    if (!lists || !index) {
        sim_free(lists);
        sim_free(index);
        return SIM_ENOMEM;
    }
    for (uint32_t t = 0; t < w->n_types && w->lists; t++)
        memcpy(lists + (size_t)t * ncap, w->lists + (size_t)t * w->cap,
               w->list_n[t] * sizeof *lists);
    sim_free(w->lists);
    sim_free(w->index);
    w->lists = lists;
    w->index = index;
    w->index_cap = ncap * 2;
    w->cap = ncap;
    for (uint32_t id = 0; id < w->n; id++)
        index_insert(w, id);
    return SIM_OK;
}

int frag_workload_add(frag_workload *w, const frag_shape *s, uint64_t count)
{
    if (s->gpus && (s->milli == 0 || s->milli > SIM_MILLI_GPU))
        return SIM_EINVAL;
    frag_shape key = *s;
    if (!key.gpus) {
        key.milli = 0;
        key.type_mask = 0;
    }
    if (w->cap) {
        uint32_t mask = w->index_cap - 1;
        for (uint32_t i = (uint32_t)shape_hash(&key) & mask; w->index[i]; i = (i + 1) & mask) {
            shape_rec *r = &w->recs[w->index[i] - 1];
            if (shape_eq(&r->s, &key)) {
                r->count += count;
                w->total += count;
                w->version++;
                return SIM_OK;
            }
        }
    }
    if (w->n == w->cap) {
        int st = grow(w);
        if (st != SIM_OK)
            return st;
    }
    uint32_t id = w->n++;
    w->recs[id].s = key;
    w->recs[id].count = count;
    index_insert(w, id);
    w->total += count;
    w->version++;
    if (!key.gpus)
        return SIM_OK;
    /* Insert into the list of every allowed type, keeping each sorted by share (ties:
     * insertion order, so the lists do not depend on anything but the add order). */
    type_entry e = {.cpu_milli = key.cpu_milli, .mem_mib = key.mem_mib, .gpus = key.gpus,
                    .milli = key.milli, .shape = id};
    for (uint32_t t = 1; t < w->n_types; t++) {
        if (key.type_mask && !((key.type_mask >> t) & 1u))
            continue;
        type_entry *l = w->lists + (size_t)t * w->cap;
        uint32_t k = w->list_n[t]++;
        while (k > 0 && l[k - 1].milli > e.milli) {
            l[k] = l[k - 1];
            k--;
        }
        l[k] = e;
    }
    return SIM_OK;
}

uint32_t frag_workload_shapes(const frag_workload *w)
{
    return w->n;
}

uint64_t frag_workload_total(const frag_workload *w)
{
    return w->total;
}

void frag_workload_get(const frag_workload *w, uint32_t i, frag_shape *s, uint64_t *count)
{
    *s = w->recs[i].s;
    *count = w->recs[i].count;
}

uint64_t frag_workload_version(const frag_workload *w)
{
    return w->version;
}

/* ---- Node and cluster fragmentation ---------------------------------------------- */

uint64_t frag_node_weighted(const frag_workload *w, const frag_node *n)
{
    uint64_t T = 0;
    for (uint32_t g = 0; g < n->n_gpus; g++)
        T += n->gpu_free[g];
    if (T == 0)
        return 0;
    uint64_t F = w->total * T;
    uint16_t t = n->gpu_type;
    if (t == SIM_GPU_TYPE_NONE || t >= w->n_types || w->list_n[t] == 0)
        return F;
    const type_entry *l = w->lists + (size_t)t * w->cap;
    uint32_t cnt = w->list_n[t], G = n->n_gpus, i = 0;
    uint64_t below = 0; /* free share of the GPUs before i (those with less than d free) */
    for (uint32_t k = 0; k < cnt; k++) {
        const type_entry *e = &l[k];
        if (n->cpu_free < e->cpu_milli || n->mem_free < e->mem_mib)
            continue;
        while (i < G && n->gpu_free[i] < e->milli)
            below += n->gpu_free[i++];
        if (G - i < e->gpus)
            continue;
        F -= w->recs[e->shape].count * (T - below);
    }
    return F;
}

void frag_sort_free(uint32_t *a, uint32_t n)
{
    for (uint32_t i = 1; i < n; i++) {
        uint32_t x = a[i], k = i;
        while (k > 0 && a[k - 1] > x) {
            a[k] = a[k - 1];
            k--;
        }
        a[k] = x;
    }
}

void frag_node_from_view(const sim_view *v, uint32_t n, uint32_t *buf, frag_node *out)
{
    uint32_t first = v->node_gpu_first[n], cnt = v->node_gpu_count[n];
    for (uint32_t k = 0; k < cnt; k++)
        buf[k] = SIM_MILLI_GPU - v->gpu_used_milli[first + k];
    frag_sort_free(buf, cnt);
    out->gpu_type = v->node_gpu_type[n];
    out->n_gpus = cnt;
    out->cpu_free = v->node_cpu_total[n] - v->node_cpu_used[n];
    out->mem_free = v->node_mem_total[n] - v->node_mem_used[n];
    out->gpu_free = buf;
}

/*
 * The meter keeps the cluster's fragmentation as per-shape sums, so that neither a
 * node that did not change nor a workload whose counts changed is measured again:
 * with T_n a node's free share and fit_s = sum over the up nodes where shape s fits of
 * (T_n - below_n(s)), the cluster's weighted fragmentation is
 * total x sum_n T_n - sum_s count_s x fit_s (the same integer as the sum of
 * frag_node_weighted over the up nodes). A changed node's old state is taken out of
 * fit and its new state put in; a new shape is added over every node once. Changed
 * nodes come from the view's change log when the meter saw the same log last time,
 * otherwise from comparing every node's state with the copy the meter keeps.
 */
struct frag_meter {
    const frag_workload *w;
    uint32_t n_nodes, n_gpus;
    bool primed;
    bool direct;         /* the per-shape sums could not grow: measure every node */
    const uint64_t *log; /* the change log read last time (view.node_change_epoch) */
    uint64_t epoch;      /* its epoch then */
    uint32_t known;      /* shapes counted in fit */
    uint32_t fit_cap;
    uint64_t *fit;         /* per shape, see above */
    uint64_t sum_free;     /* sum of T_n over the up nodes (milli-GPU) */
    uint64_t idle;         /* free GPU capacity of the up nodes (node_used_milli) */
    uint64_t *node_cpu;    /* CPU used as last counted */
    uint64_t *node_mem;    /* memory used */
    uint64_t *node_used;   /* node_used_milli */
    uint8_t *node_up;      /* up or down */
    uint32_t *gpu_used;    /* each GPU's used share */
    uint32_t *buf;         /* scratch: one node's free shares */
    /* Scratch of a measure that meets new shapes: each type's list cut to its new
     * entries (in list order), type t's at fresh + t x fresh_stride, fresh_n[t] of them. */
    type_entry *fresh;
    size_t fresh_stride;
    uint32_t fresh_cap;
    uint32_t fresh_n[SIM_MAX_GPU_TYPES];
};

int frag_meter_create(frag_meter **out, const frag_workload *w, uint32_t n_nodes,
                      uint32_t n_gpus)
{
    *out = NULL;
    frag_meter *m = sim_calloc(1, sizeof *m);
    if (!m)
        return SIM_ENOMEM;
    m->w = w;
    m->n_nodes = n_nodes;
    m->n_gpus = n_gpus;
    m->fit_cap = 16;
    m->fit = sim_calloc(m->fit_cap, sizeof *m->fit);
    m->node_cpu = sim_calloc(n_nodes ? n_nodes : 1, sizeof *m->node_cpu);
    m->node_mem = sim_calloc(n_nodes ? n_nodes : 1, sizeof *m->node_mem);
    m->node_used = sim_calloc(n_nodes ? n_nodes : 1, sizeof *m->node_used);
    m->node_up = sim_calloc(n_nodes ? n_nodes : 1, sizeof *m->node_up);
    m->gpu_used = sim_calloc(n_gpus ? n_gpus : 1, sizeof *m->gpu_used);
    m->buf = sim_calloc(n_gpus ? n_gpus : 1, sizeof *m->buf);
    if (!m->fit || !m->node_cpu || !m->node_mem || !m->node_used || !m->node_up || !m->gpu_used ||
        !m->buf) {
        frag_meter_destroy(m);
        return SIM_ENOMEM;
    }
    *out = m;
    return SIM_OK;
}

void frag_meter_destroy(frag_meter *m)
{
    if (!m)
        return;
    sim_free(m->fit);
    sim_free(m->node_cpu);
    sim_free(m->node_mem);
    sim_free(m->node_used);
    sim_free(m->node_up);
    sim_free(m->gpu_used);
    sim_free(m->buf);
    sim_free(m->fresh);
    sim_free(m);
}

void frag_meter_forget(frag_meter *m)
{
    m->log = NULL;
}

/* Add (sign > 0) or take out node n's counted state: in the sums of the shapes of its
 * type's list (type t's at lists + t x stride, cnt_of[t] entries, sorted by share), and
 * in the node sums (free share, idle GPUs) when `node_sums`. */
static void count_node(frag_meter *m, const sim_view *v, uint32_t n, int sign,
                       const type_entry *lists, size_t stride, const uint32_t *cnt_of,
                       bool node_sums)
{
    if (!m->node_up[n])
        return;
    const frag_workload *w = m->w;
    uint32_t first = v->node_gpu_first[n], G = v->node_gpu_count[n];
    uint64_t T = 0;
    for (uint32_t k = 0; k < G; k++) {
        m->buf[k] = SIM_MILLI_GPU - m->gpu_used[first + k];
        T += m->buf[k];
    }
    if (node_sums) {
        uint64_t idle = (uint64_t)G * SIM_MILLI_GPU - m->node_used[n];
        m->sum_free = sign > 0 ? m->sum_free + T : m->sum_free - T;
        m->idle = sign > 0 ? m->idle + idle : m->idle - idle;
    }
    uint16_t t = v->node_gpu_type[n];
    if (T == 0 || t == SIM_GPU_TYPE_NONE || t >= w->n_types || cnt_of[t] == 0)
        return;
    frag_sort_free(m->buf, G);
    uint64_t cpu_free = v->node_cpu_total[n] - m->node_cpu[n];
    uint64_t mem_free = v->node_mem_total[n] - m->node_mem[n];
    const type_entry *l = lists + t * stride;
    uint32_t cnt = cnt_of[t], i = 0;
    uint64_t below = 0;
    for (uint32_t k = 0; k < cnt; k++) {
        const type_entry *e = &l[k];
        if (cpu_free < e->cpu_milli || mem_free < e->mem_mib)
            continue;
        while (i < G && m->buf[i] < e->milli)
            below += m->buf[i++];
        if (G - i < e->gpus)
            continue;
        m->fit[e->shape] =
            sign > 0 ? m->fit[e->shape] + (T - below) : m->fit[e->shape] - (T - below);
    }
}

/* Re-count node n when its state differs from the counted one. */
static void refresh_node(frag_meter *m, const sim_view *v, uint32_t n)
{
    uint32_t first = v->node_gpu_first[n], cnt = v->node_gpu_count[n];
    if (m->node_cpu[n] == v->node_cpu_used[n] && m->node_mem[n] == v->node_mem_used[n] &&
        m->node_up[n] == (uint8_t)v->node_up[n] && m->node_used[n] == v->node_used_milli[n] &&
        memcmp(m->gpu_used + first, v->gpu_used_milli + first, cnt * sizeof *m->gpu_used) == 0)
        return;
    count_node(m, v, n, -1, m->w->lists, m->w->cap, m->w->list_n, true);
    memcpy(m->gpu_used + first, v->gpu_used_milli + first, cnt * sizeof *m->gpu_used);
    m->node_cpu[n] = v->node_cpu_used[n];
    m->node_mem[n] = v->node_mem_used[n];
    m->node_used[n] = v->node_used_milli[n];
    m->node_up[n] = (uint8_t)v->node_up[n];
    count_node(m, v, n, +1, m->w->lists, m->w->cap, m->w->list_n, true);
}

/* Cut each type's list to the entries of the shapes not counted yet (m->known on), in
 * list order, into m->fresh; false when out of memory. */
static bool cut_fresh(frag_meter *m)
{
    const frag_workload *w = m->w;
    size_t stride = w->n - m->known;
    if ((uint64_t)w->n_types * stride > UINT32_MAX ||
        !sim_reserve((void **)&m->fresh, &m->fresh_cap, (uint32_t)(w->n_types * stride),
                     sizeof *m->fresh))
        return false;
    m->fresh_stride = stride;
    for (uint32_t t = 0; t < w->n_types; t++) {
        const type_entry *l = w->lists + (size_t)t * w->cap;
        type_entry *f = m->fresh + t * stride;
        uint32_t k = 0;
        for (uint32_t i = 0; i < w->list_n[t]; i++)
            if (l[i].shape >= m->known)
                f[k++] = l[i];
        m->fresh_n[t] = k;
    }
    return true;
}

/* Every up node measured from the view (when the sums could not grow). */
static void measure_direct(frag_meter *m, const sim_view *v, uint64_t *frag, uint64_t *idle)
{
    *frag = *idle = 0;
    for (uint32_t n = 0; n < v->n_nodes && n < m->n_nodes; n++) {
        if (!v->node_up[n])
            continue;
        frag_node fn;
        frag_node_from_view(v, n, m->buf, &fn);
        *frag += frag_node_weighted(m->w, &fn);
        *idle += (uint64_t)v->node_gpu_count[n] * SIM_MILLI_GPU - v->node_used_milli[n];
    }
}

void frag_meter_measure(frag_meter *m, const sim_view *v, double *frag_gpus, double *idle_gpus)
{
    const frag_workload *w = m->w;
    uint32_t nn = v->n_nodes < m->n_nodes ? v->n_nodes : m->n_nodes;
    if (!m->direct && w->n > m->fit_cap) {
        uint32_t cap = m->fit_cap;
        while (cap < w->n)
            cap = cap > UINT32_MAX / 2 ? w->n : cap * 2;
        uint64_t *fit = sim_reallocarray(m->fit, cap, sizeof *fit);
        if (fit) {
            memset(fit + m->fit_cap, 0, (size_t)(cap - m->fit_cap) * sizeof *fit);
            m->fit = fit;
            m->fit_cap = cap;
        } else {
            m->direct = true;
        }
    }
    if (!m->direct && m->known && w->n > m->known && !cut_fresh(m))
        m->direct = true;
    uint64_t frag = 0, idle = 0;
    if (m->direct) {
        measure_direct(m, v, &frag, &idle);
    } else {
        /* New shapes, over the counted state of every node: the whole lists the first
         * time, then only the new entries. */
        if (w->n > m->known) {
            bool all = m->known == 0;
            for (uint32_t n = 0; n < nn; n++)
                count_node(m, v, n, +1, all ? w->lists : m->fresh, all ? w->cap : m->fresh_stride,
                           all ? w->list_n : m->fresh_n, false);
            m->known = w->n;
        }
        uint64_t now = v->change_epoch;
        if (m->primed && v->change_ring && v->node_change_epoch == m->log && now >= m->epoch &&
            now - m->epoch <= SIM_CHANGE_RING) {
            for (uint64_t ep = m->epoch + 1; ep <= now; ep++) {
                uint32_t n = v->change_ring[ep % SIM_CHANGE_RING];
                if (n < nn && v->node_change_epoch[n] == ep)
                    refresh_node(m, v, n);
            }
        } else {
            for (uint32_t n = 0; n < nn; n++)
                refresh_node(m, v, n);
        }
        m->primed = true;
        m->log = v->change_ring ? v->node_change_epoch : NULL;
        m->epoch = now;
        frag = w->total * m->sum_free;
        for (uint32_t s = 0; s < w->n; s++)
            frag -= w->recs[s].count * m->fit[s];
        idle = m->idle;
    }
    uint64_t total = frag_workload_total(w);
    *frag_gpus = total ? (double)frag / (double)total / 1000.0 : 0;
    *idle_gpus = (double)idle / 1000.0;
}

void frag_builder_init(frag_builder *b, frag_workload *wl, const cluster_spec *cl,
                       const uint64_t *type_mem)
{
    memset(b, 0, sizeof *b);
    b->wl = wl;
    b->cl = cl;
    b->type_mem = type_mem;
}

/* GPUs of the largest node where the job's GPUs are allowed (type and GPU memory), as
 * the engine's admission resolves replicas. Cached per (types, GPU memory). */
static uint32_t max_gpus(frag_builder *f, const job_spec *j)
{
    uint32_t slot = (uint32_t)((j->gpu_type_mask * 31 + j->gpu_mem_mib) % FRAG_BUILDER_CACHE);
    if (f->cache_used[slot] && f->cache_mask[slot] == j->gpu_type_mask &&
        f->cache_gmem[slot] == j->gpu_mem_mib)
        return f->cache_gpus[slot];
    uint32_t best = 0;
    for (uint32_t n = 0; n < f->cl->n_nodes; n++) {
        const node_spec *ns = &f->cl->nodes[n];
        if (!ns->num_gpus || (j->gpu_type_mask && !((j->gpu_type_mask >> ns->gpu_type) & 1u)))
            continue;
        uint64_t mem =
            ns->gpu_mem_mib ? ns->gpu_mem_mib : (f->type_mem ? f->type_mem[ns->gpu_type] : 0);
        if (mem && mem < j->gpu_mem_mib)
            continue;
        if (ns->num_gpus > best)
            best = ns->num_gpus;
    }
    f->cache_used[slot] = true;
    f->cache_mask[slot] = j->gpu_type_mask;
    f->cache_gmem[slot] = j->gpu_mem_mib;
    f->cache_gpus[slot] = best;
    return best;
}

int frag_builder_add_job(frag_builder *f, const job_spec *j, sim_diag *d)
{
    uint32_t r = 1;
    if (j->num_gpus)
        r = frag_replicas_of_job(j, j->replicas ? 0 : max_gpus(f, j));
    frag_shape s;
    frag_shape_of_job(j, r, &s);
    int st = frag_workload_add(f->wl, &s, 1);
    if (st != SIM_OK)
        return sim_diag_set(d, st, NULL, 0, 0, "job '%s': cannot add its shape to the workload",
                            j->id);
    return SIM_OK;
}
