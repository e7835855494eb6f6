/*
 * interleave.c: Muri-style interleaved packing (Zhao et al., "Multi-Resource
 * Interleaving for Deep Learning Training", SIGCOMM'22; its simulator,
 * github.com/Rivendile/Muri, simulator/run_sim.py and matching.py).
 *
 * At every scheduling point (each arrival and departure, and every `interval` seconds
 * when set) the whole plan is made again, as the reference does:
 *  1. Order: every job in the system, running or waiting, by remaining service (remaining
 *     time x GPUs, durations known: Muri-S) or by attained service (time run x GPUs:
 *     Muri-L; with `thresholds`, in Tiresias' discretised queues, FIFO within a queue);
 *     ties by arrival.
 *  2. Candidates: on an empty copy of the cluster, the jobs are taken in that order; a job
 *     whose GPUs still fit there (first fit, node by node) opens a slot for its shape (the
 *     same GPUs per replica and replicas), and the slot takes up to `max_pack` jobs of
 *     that shape, the next ones in the order.
 *  3. Grouping: while the candidates need more GPUs than the cluster has, up to
 *     `max_pack` rounds of maximum-weight matching (Edmonds' blossom, policies/blossom.cc)
 *     per shape join packs pairwise (packs of up to max_pack jobs), the weight of two packs
 *     being the utilisation of the resources by their union (sum of solo iteration times
 *     over resources x pack iteration time); the matched pairs are merged, in order, only
 *     as long as the GPUs needed still exceed the cluster's.
 *  4. Packs slower than their jobs alone (pack iteration time above the sum of the solo
 *     times x 1.015) are split; the packs are ordered by their best member, placed on the
 *     empty copy again in that order, and those that fit make the plan.
 *  5. The plan is placed afresh, as Muri does at every event: packs with the most GPUs
 *     first, first fit on an empty copy; a pack that does not fit is left out. A pack
 *     whose jobs already run together keeps its GPUs when the others fit beside the packs
 *     that stay (else only when it runs on the nodes that placement gave it); every other
 *     running job is preempted (checkpointed by default); new packs start on their
 *     target nodes.
 * A pack's iteration time is Muri's cycle (matching.py, _Packing.calc_iteration_time: the
 * best order of the members; a slot recurrence for three-stage profiles) x the overhead
 * of its size; a job alone runs at its solo iteration time x 1.015. A pack of k jobs holds
 * floor(1000/k) milli of each of its GPUs per member, and each member's speed factor is
 * set so that its speed is solo / pack iteration time (the core's time-slicing cap of a
 * share is divided out). Jobs without stage profiles run alone. The restart cost is the
 * run's --restart-penalty.
 */
#include "policies/interleave.h"

#include "policies/blossom.h"
#include "policies/classmatch.h"
#include "policies/place.h"

#include "models/catalog.h"

#include "base/alloc.h"
#include "base/csvin.h"
#include "base/maxtree.h"
#include "base/intern.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define IL_MAX_QUEUES 16
#define NONE UINT32_MAX
/* Weights of the matching are integers: the utilisation in millionths. */
#define IL_WEIGHT_SCALE 1e6
#define IL_MEMO_SLOTS 4096u
#define IL_MEMO_POOL (1u << 20)
/* Most signature classes matched at the class level. */
#define IL_CLASS_MAX 64u
/* Graphs of up to this many packs are matched in a small workspace. */
#define IL_SMALL_GRAPH 64u
/* Memo records of remainders (class matching) are tagged apart from whole graphs. */
#define IL_MEMO_LEFT (1ull << 32)
/* Distinct GPU counts of a plan's packs sorted by counting. */
#define IL_GPU_COUNTS 16u
/* Cache of pack cycle times by the multiset of the members' profiles. */
#define IL_ITER_SLOTS 4096u
/* GPUs per replica up to which a first fit keeps where its search may start. */
#define IL_HINTS 33u

double il_solo_ms(const double stage[IL_RESOURCES])
{
    double s = 0;
    for (int r = 0; r < IL_RESOURCES; r++)
        s += stage[r];
    return s;
}

static bool close_rel(double a, double b, double rel)
{
    return fabs(a - b) <= rel * fmax(fabs(a), fabs(b));
}

/* Muri's cycle for three-stage profiles (matching.py, _Packing.calc_iteration_time with
 * multi_resource 4 and three resource times): four slots per cycle, two rounds; in slot
 * i + 1 member (i + 1) mod 4 runs its third stage (net) after slot i, member (i + 2) mod 4
 * its second (gpu) after slot i, and member (i + 3) mod 4 its first (cpu) after slot i - 1;
 * the cycle time is the first slot-to-slot difference over four slots that repeats
 * (relative 1e-3), else the second round's. */
static double cycle3(const double (*st)[IL_RESOURCES], const uint32_t *perm, uint32_t k)
{
    double f[9] = {0};
    for (uint32_t i = 0; i < 8; i++) {
        if ((i + 1) % 4 < k)
            f[i + 1] = fmax(f[i + 1], f[i] + st[perm[(i + 1) % 4]][3]);
        if ((i + 2) % 4 < k)
            f[i + 1] = fmax(f[i + 1], f[i] + st[perm[(i + 2) % 4]][2]);
        if (i > 0 && (i + 3) % 4 < k)
            f[i + 1] = fmax(f[i + 1], f[i - 1] + st[perm[(i + 3) % 4]][1]);
        if (i >= 4 && close_rel(f[i + 1] - f[i - 3], f[i] - f[i - 4], 1e-3)) {
            double t = f[i + 1] - f[i - 3];
            if (t > 0)
                return t;
            break;
        }
    }
    return f[8] - f[4];
}

/* Muri's cycle for four-stage profiles: member at position q of the order runs its stage
 * (r - q) mod 4 in slot r; each slot lasts its longest stage. */
static double cycle4(const double (*st)[IL_RESOURCES], const uint32_t *perm, uint32_t k)
{
    double t = 0;
    for (uint32_t r = 0; r < IL_RESOURCES; r++) {
        double mx = 0;
        for (uint32_t q = 0; q < k; q++)
            mx = fmax(mx, st[perm[q]][(r + IL_RESOURCES - q) % IL_RESOURCES]);
        t += mx;
    }
    return t;
}

double il_pack_iter_ms(const double (*stage)[IL_RESOURCES], uint32_t k)
{
    if (k <= 1)
        return k ? il_solo_ms(stage[0]) : 0;
    bool three = true;
    for (uint32_t i = 0; i < k; i++)
        three = three && stage[i][0] == 0;
    /* The best of every order of the members (k <= 4: at most 24). */
    uint32_t perm[IL_MAX_PACK], c[IL_MAX_PACK] = {0};
    for (uint32_t i = 0; i < k; i++)
        perm[i] = i;
    double best = three ? cycle3(stage, perm, k) : cycle4(stage, perm, k);
    for (uint32_t i = 1; i < k;) { /* Heap's algorithm */
        if (c[i] < i) {
            uint32_t a = i % 2 ? c[i] : 0, t = perm[a];
            perm[a] = perm[i];
            perm[i] = t;
            double x = three ? cycle3(stage, perm, k) : cycle4(stage, perm, k);
            if (x < best)
                best = x;
            c[i]++;
            i = 1;
        } else
            c[i++] = 0;
    }
    /* Two three-stage jobs: also the order that runs one's cpu stage beside the other's
     * gpu and net stages, then the reverse. */
    if (three && k == 2) {
        double x = fmax(stage[0][1], stage[1][2] + stage[1][3]) +
                   fmax(stage[1][1], stage[0][2] + stage[0][3]);
        if (x < best)
            best = x;
    }
    if (!(best > 0)) {
        /* A cycle the recurrence cannot time (all-zero stages in the slots it reads):
         * the busiest resource. */
        for (uint32_t r = 0; r < IL_RESOURCES; r++) {
            double sum = 0;
            for (uint32_t i = 0; i < k; i++)
                sum += stage[i][r];
            best = fmax(best, sum);
        }
    }
    return best;
}

/* A model class's stage profile from the profile table. */
typedef struct il_model {
    char name[64];
    double stage[IL_RESOURCES];
} il_model;

/* One job in the system. */
typedef struct il_entry {
    double stage[IL_RESOURCES];
    double solo;   /* solo iteration time, ms (the trace's, else the stages' sum); 0 = no
                      profile: runs alone */
    double ssum;   /* sum of the stage times, ms */
    double key;    /* sort key of this pass */
    uint64_t seq;  /* arrival order */
    uint64_t mask; /* GPU types accepted */
    uint64_t cpu, mem; /* per replica, milli-CPU and MiB */
    uint64_t gmem;     /* per GPU, MiB */
    sim_job_id id;
    uint32_t gpus; /* GPUs in all */
    uint32_t reps, gpr;
    uint32_t queue; /* Muri-L: queue of this pass */
    uint32_t group; /* shape group of this pass */
    uint32_t gnext; /* next entry of the same group in order */
    uint32_t prof;  /* profile id (1-based; 0 = no profile) */
    bool cand;
} il_entry;

/* Per-job policy state. */
typedef struct il_job {
    uint64_t listed; /* seq + 1 while the job has an entry */
    uint32_t tag;    /* pack it runs in (0 = none) */
    uint32_t k;      /* members of that pack */
    uint32_t node;   /* while it runs (tag set): the node of its first replica */
    double factor;   /* the speed factor it was last given (the core keeps it; 1 at first) */
} il_job;

/* A pack of this pass: up to IL_MAX_PACK entries. */
typedef struct il_pack {
    uint32_t m[IL_MAX_PACK];
    uint32_t k;
    uint32_t group;
    double iter;   /* pack iteration time, ms, overhead included */
    uint32_t tn;   /* its replicas' target nodes: tnode[tn ..] */
    uint32_t gpus; /* GPUs of each member */
    uint16_t type; /* GPU type chosen for it (0: first fit over the allowed types) */
} il_pack;

typedef struct il_group {
    uint32_t reps, gpr;
    uint64_t mask;
    uint32_t head, tail; /* entries in order */
    uint32_t cursor;     /* next entry to take into a slot */
    uint32_t gpus;
    bool no_fit; /* found no room in this pass's candidates (the copy only fills up) */
} il_group;

typedef struct il_state {
    place_ws ws;
    blossom_ws *bl;
    blossom_ws *bls; /* a small one for small graphs (denser in cache) */
    int ordering;    /* 0 srsf, 1 las */
    uint32_t max_pack;
    sim_time interval_us;
    double overhead[IL_MAX_PACK + 1];
    double thr[IL_MAX_QUEUES - 1];
    uint32_t n_thr;
    bool checkpoint;
    il_entry *e;
    uint32_t n, cap;
    uint32_t n_gpuless; /* arrived jobs that request no GPU, not yet rejected */
    uint64_t max_cpu, max_mem; /* the largest node's CPU (milli) and memory (MiB) */
    uint64_t max_gmem;         /* the largest GPU's memory (MiB) */
    bool max_read;             /* max_cpu, max_mem and max_gmem are set */
    /* Scratch, sized with e (cap). */
    uint32_t *best; /* per entry: the pack it is the best member of, or NONE */
    uint64_t *rank; /* per pack: its GPUs (complemented) and position, to sort by */
    il_pack *pk, *pk2;
    uint32_t n_pk;
    il_group *grp;
    uint32_t n_grp;
    uint32_t *idx; /* packs of one group (positions in pk) */
    uint32_t *mate;
    uint8_t *inplace;
    uint32_t *claim; /* per tag: claimed this pass */
    uint32_t claim_cap;
    /* Per node, sized at init. */
    uint32_t *nfree, *touched, *taken;
    uint32_t *seg; /* max tree over nfree, of seg_p leaves (base/maxtree.h) */
    uint32_t seg_p;
    uint64_t free_total; /* sum of nfree */
    /* hint[g]: every node before it has fewer than g GPUs free in nfree (a first fit of g
     * GPUs starts its search there). nfree only falls between two settings back of the
     * empty cluster (a failed fit puts back what it took), so the hints only move on. */
    uint32_t hint[IL_HINTS];
    /* The empty cluster (every up node's GPUs free) as of up_epoch, free_empty GPUs in
     * all: nfree and seg are set back to it by undoing the changes to the nodes listed in
     * dirty (each once, is_dirty), not rebuilt, while no node went down or came back. */
    uint32_t *dirty;
    uint8_t *is_dirty;
    uint32_t n_dirty, dirty_max;
    bool empty_built;
    uint64_t empty_epoch, free_empty;
    uint64_t present;    /* GPU types of the up nodes with GPUs (bit t), as of empty_epoch */
    uint32_t *cands;     /* nodes of one GPU type, for start_pack */
    uint32_t *ncount;    /* per node: GPUs of a job there (keeps_nodes) */
    uint32_t *tnode;     /* target node per replica of the placed packs (n_gpus) */
    uint32_t *tnode2;    /* the same, where the packs that stay together keep their GPUs */
    uint32_t tnode_cap;
    uint32_t n_nodes;
    uint32_t n_touched; /* nodes the last successful vfit took GPUs from */
    uint32_t pass;      /* passes made, for the tag claims */
    /* Distinct stage profiles seen (their ids key the memo of matchings). */
    double (*prof)[IL_RESOURCES];
    uint32_t n_prof, prof_cap;
    /* Memo of matchings by the multiset of pack signatures: a direct-mapped table over a
     * pool of words, cleared when the pool is full. */
    uint64_t *memo_key; /* per slot: hash (0 = empty) */
    uint32_t *memo_off; /* per slot: offset in the pool */
    uint64_t *pool;
    uint32_t pool_used;
    uint64_t *iter_key;     /* cycle-time cache: signature per slot (0 = empty) ... */
    double *iter_val;       /* ... and the cycle time, ms, before the overhead factor */
    uint64_t *sig, *sorted; /* per vertex (blossom cap) */
    uint8_t *used;
    uint64_t *plist; /* matched signature pairs, 2 per pair (blossom cap) */
    /* Class matching: signature classes of one graph (up to IL_CLASS_MAX). */
    cmatch_ws *cm;
    uint64_t *csig;
    uint32_t *crep, *ccount, *cpairs, *crpairs;
    int64_t *cw;
    uint32_t next_tag;
    sim_time last_pass;
    bool oom;
    /* Model-class profiles (option profiles) and the run's model names. */
    il_model *models;
    uint32_t n_models;
    const sim_intern *model_names;
} il_state;

static const policy_option il_options[] = {
    {"ordering", "srsf",
     "srsf: shortest remaining service first, durations known (Muri-S); las: least attained "
     "service in Tiresias' queues (Muri-L)"},
    {"max_pack", "4", "most jobs in a pack (1..4; 1 = no packing)"},
    {"interval", "0",
     "regroup also every this many seconds, at least 0.001 (0: only at arrivals and finishes)"},
    {"thresholds", "",
     "ordering=las: attained GPU-seconds that move a job to the next queue, increasing (none: "
     "by attained service itself, as Muri-L)"},
    {"overhead", "1.015,1.310,1.478,1.350",
     "iteration-time factor of a job alone and of packs of 2,3,4 jobs (Muri's measured "
     "overheads)"},
    {"checkpoint", "true", "a preempted job keeps its work (false: it loses its run segment)"},
    {"max_vertices", "512", "largest matching graph (packs of one shape per round)"},
    {"profiles", "shipped",
     "stage profiles by model class for jobs without their own: shipped "
     "(models/data/model_profiles.csv), none, or a CSV file "
     "model,stage_storage_ms,stage_cpu_ms,stage_gpu_ms,stage_net_ms"},
    {NULL, NULL, NULL},
};

static int parse_list(const char *text, double *out, uint32_t max, uint32_t *n, bool increasing,
                      const char *opt, sim_diag *d)
{
    *n = 0;
    for (const char *p = text; *p;) {
        size_t len = strcspn(p, ",");
        double x;
        if (*n == max || !csvin_parse_double(p, len, &x) || !(x > 0) || x > 1e15 ||
            (increasing && *n && x <= out[*n - 1]))
            return sim_diag_set(d, SIM_EINVAL, NULL, 0, 0,
                                "policy 'interleave': option '%s': expected up to %u %spositive "
                                "numbers separated by commas, got \"%s\"",
                                opt, max, increasing ? "increasing " : "", text);
        out[(*n)++] = x;
        p += len + (p[len] == ',');
    }
    return SIM_OK;
}

#define IL_MAX_MODELS 1024u

/* Read the model-class profile table. */
static int load_profiles(il_state *s, const char *path, sim_diag *d)
{
    static const char *const cols[1 + IL_RESOURCES] = {"model", "stage_storage_ms", "stage_cpu_ms",
                                                       "stage_gpu_ms", "stage_net_ms"};
    csvin *in;
    int st = csvin_open(&in, path, ',', d);
    if (st != SIM_OK)
        return st;
    csvin_row row;
    int32_t ix[1 + IL_RESOURCES];
    st = csvin_next(in, &row, d);
    if (st == 0)
        st = sim_diag_set(d, SIM_EPARSE, path, 1, 0, "empty file: expected a header");
    if (st < 0)
        goto out;
    uint32_t width = row.n;
    if ((st = csvin_map_header(in, &row, cols, 1 + IL_RESOURCES, ix, NULL, d)) != SIM_OK)
        goto out;
    for (int i = 0; i < 1 + IL_RESOURCES; i++)
        if (ix[i] < 0) {
            st = sim_diag_set(d, SIM_EPARSE, path, row.line, 0,
                              "missing column '%s'; expected header "
                              "model,stage_storage_ms,stage_cpu_ms,stage_gpu_ms,stage_net_ms",
                              cols[i]);
            goto out;
        }
    while ((st = csvin_next(in, &row, d)) == 1) {
        if ((st = csvin_row_width(in, &row, width, d)) != SIM_OK)
            goto out;
        size_t len = csvin_empty(&row, ix[0]) ? 0 : row.len[ix[0]];
        if (len == 0 || len >= sizeof s->models[0].name) {
            st = csvin_field_error(in, &row, ix[0], "model", "a model name of 1 to 63 bytes", d);
            goto out;
        }
        for (uint32_t m = 0; m < s->n_models; m++)
            if (strlen(s->models[m].name) == len &&
                memcmp(s->models[m].name, row.f[ix[0]], len) == 0) {
                st = csvin_field_error(in, &row, ix[0], "model", "a model not listed before", d);
                goto out;
            }
        if (s->n_models == IL_MAX_MODELS) {
            st = sim_diag_set(d, SIM_ELIMIT, path, row.line, 0, "more than %u model classes",
                              IL_MAX_MODELS);
            goto out;
        }
        il_model *m = &s->models[s->n_models];
        memcpy(m->name, row.f[ix[0]], len);
        m->name[len] = '\0';
        for (int r = 0; r < IL_RESOURCES; r++)
            if ((st = csvin_double(in, &row, ix[1 + r], cols[1 + r], 0, 1e15, &m->stage[r], d)))
                goto out;
        if (!(il_solo_ms(m->stage) > 0)) {
            st = csvin_field_error(in, &row, ix[1], "stage_storage_ms",
                                   "a stage profile with some time (the four stages are all 0)", d);
            goto out;
        }
        s->n_models++;
    }
out:
    csvin_close(in);
    return st < 0 ? st : SIM_OK;
}

/* The table's profile of a job's model class, or NULL. */
static const il_model *model_profile(const il_state *s, const job_spec *spec)
{
    if (!s->n_models || !s->model_names || spec->model == 0)
        return NULL;
    const char *name = sim_intern_name(s->model_names, spec->model);
    for (uint32_t m = 0; m < s->n_models; m++)
        if (strcmp(s->models[m].name, name) == 0)
            return &s->models[m];
    return NULL;
}

static const sim_attr il_stage_attr[IL_RESOURCES] = {
    SIM_ATTR_STAGE_STORAGE_MS, SIM_ATTR_STAGE_CPU_MS, SIM_ATTR_STAGE_GPU_MS, SIM_ATTR_STAGE_NET_MS};

/* Where a job's stage profile comes from: its trace, the model-class table, or none
 * (it runs alone). */
static const char *profile_source(const il_state *s, const job_spec *spec)
{
    for (int r = 0; r < IL_RESOURCES; r++)
        if (job_spec_has(spec, il_stage_attr[r]) && spec->attr[il_stage_attr[r]] > 0)
            return "trace";
    return model_profile(s, spec) ? "model" : "none";
}

static const char *il_job_value(const void *st, const job_spec *spec)
{
    return profile_source(st, spec);
}

static int init_state(void *st, const policy_config *cfg, sim_diag *d)
{
    il_state *s = st;
    static const char *const orderings[] = {"srsf", "las", NULL};
    uint64_t mp, mv;
    double interval;
    double ov[4];
    uint32_t n_ov;
    int rc;
    if ((rc = policy_config_choice(cfg, il_options, "ordering", orderings, &s->ordering, d)) ||
        (rc = policy_config_u64(cfg, il_options, "max_pack", 1, IL_MAX_PACK, &mp, d)) ||
        (rc = policy_config_double(cfg, il_options, "interval", 0, 1e9, &interval, d)) ||
        (rc = parse_list(policy_config_get(cfg, il_options, "thresholds"), s->thr,
                         IL_MAX_QUEUES - 1, &s->n_thr, true, "thresholds", d)) ||
        (rc = parse_list(policy_config_get(cfg, il_options, "overhead"), ov, 4, &n_ov, false,
                         "overhead", d)) ||
        (rc = policy_config_bool(cfg, il_options, "checkpoint", &s->checkpoint, d)) ||
        (rc = policy_config_u64(cfg, il_options, "max_vertices", 2, 4096, &mv, d)))
        return rc;
    /* As the other policies' periods: at least a millisecond (0: no timer). */
    if (interval > 0 && interval < 0.001)
        return sim_diag_set(d, SIM_EINVAL, NULL, 0, 0,
                            "policy 'interleave': option 'interval': expected 0 or a number of "
                            "seconds in [0.001, 1e+09], got \"%s\"",
                            policy_config_get(cfg, il_options, "interval"));
    if (n_ov != 4)
        return sim_diag_set(d, SIM_EINVAL, NULL, 0, 0,
                            "policy 'interleave': option 'overhead': expected 4 factors (a job "
                            "alone, packs of 2, 3 and 4 jobs), got \"%s\"",
                            policy_config_get(cfg, il_options, "overhead"));
    s->overhead[0] = 1;
    for (int i = 0; i < 4; i++)
        s->overhead[i + 1] = ov[i];
    s->max_pack = (uint32_t)mp;
    s->interval_us = (sim_time)llround(interval * 1e6);
    /* A shape's graph has at most max_pack candidates per slot, and slots are at most the
     * cluster's GPUs: size the matching once. */
    uint64_t cap = (uint64_t)cfg->n_gpus * mp;
    if (cap > mv)
        cap = mv;
    if (cap < 2)
        cap = 2;
    s->bl = blossom_new((uint32_t)cap);
    if (!s->bl)
        return sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "policy 'interleave': out of memory");
    s->n_nodes = cfg->n_nodes;
    size_t nn = cfg->n_nodes ? cfg->n_nodes : 1;
    s->nfree = sim_calloc(nn, sizeof *s->nfree);
    s->seg_p = maxtree_leaves((uint32_t)nn);
    s->seg = sim_calloc(2 * (size_t)s->seg_p, sizeof *s->seg);
    s->touched = sim_calloc(nn, sizeof *s->touched);
    s->dirty = sim_calloc(nn, sizeof *s->dirty);
    s->is_dirty = sim_calloc(nn, sizeof *s->is_dirty);
    s->taken = sim_calloc(nn, sizeof *s->taken);
    s->cands = sim_calloc(nn, sizeof *s->cands);
    s->ncount = sim_calloc(nn, sizeof *s->ncount);
    s->tnode_cap = cfg->n_gpus ? cfg->n_gpus : 1;
    s->tnode = sim_calloc(s->tnode_cap, sizeof *s->tnode);
    s->tnode2 = sim_calloc(s->tnode_cap, sizeof *s->tnode2);
    uint32_t bc = blossom_cap(s->bl ? s->bl : NULL);
    s->memo_key = sim_calloc(IL_MEMO_SLOTS, sizeof *s->memo_key);
    s->memo_off = sim_calloc(IL_MEMO_SLOTS, sizeof *s->memo_off);
    s->pool = sim_calloc(IL_MEMO_POOL, sizeof *s->pool);
    s->iter_key = sim_calloc(IL_ITER_SLOTS, sizeof *s->iter_key);
    s->iter_val = sim_calloc(IL_ITER_SLOTS, sizeof *s->iter_val);
    s->sig = sim_calloc(bc, sizeof *s->sig);
    s->sorted = sim_calloc(bc, sizeof *s->sorted);
    s->used = sim_calloc(bc, sizeof *s->used);
    s->plist = sim_calloc(2 * (size_t)bc, sizeof *s->plist);
    s->bls = blossom_new(bc < IL_SMALL_GRAPH ? bc : IL_SMALL_GRAPH);
    s->cm = s->bl ? cmatch_new(bc < IL_CLASS_MAX ? bc : IL_CLASS_MAX, s->bl) : NULL;
    s->csig = sim_calloc(IL_CLASS_MAX, sizeof *s->csig);
    s->crep = sim_calloc(IL_CLASS_MAX, sizeof *s->crep);
    s->ccount = sim_calloc(IL_CLASS_MAX, sizeof *s->ccount);
    s->cpairs = sim_calloc(IL_CLASS_MAX * IL_CLASS_MAX, sizeof *s->cpairs);
    s->cw = sim_calloc(IL_CLASS_MAX * IL_CLASS_MAX, sizeof *s->cw);
    s->crpairs = sim_calloc(IL_CLASS_MAX * IL_CLASS_MAX, sizeof *s->crpairs);
    if (!s->bl || !s->nfree || !s->seg || !s->touched || !s->dirty || !s->is_dirty || !s->taken ||
        !s->cands || !s->ncount || !s->tnode || !s->tnode2 || !s->iter_key || !s->iter_val ||
        !s->memo_key || !s->memo_off || !s->pool || !s->sig || !s->sorted || !s->used ||
        !s->plist || !s->bls || !s->cm || !s->csig || !s->crep || !s->ccount || !s->cpairs ||
        !s->cw || !s->crpairs)
        return sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "policy 'interleave': out of memory");
    s->last_pass = SIM_TIME_NEVER;
    s->next_tag = 1;
    const char *prof = policy_config_get(cfg, il_options, "profiles");
    if (strcmp(prof, "none") != 0) {
        char path[1024];
        if (strcmp(prof, "shipped") == 0)
            snprintf(path, sizeof path, "%s/models/data/model_profiles.csv", model_data_dir());
        else
            snprintf(path, sizeof path, "%s", prof);
        s->models = sim_calloc(IL_MAX_MODELS, sizeof *s->models);
        if (!s->models)
            return sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "policy 'interleave': out of memory");
        if ((rc = load_profiles(s, path, d)) != SIM_OK)
            return rc;
        s->model_names = cfg->models;
    }
    return place_ws_init(&s->ws, cfg, d);
}

static void il_fini(void *st)
{
    il_state *s = st;
    blossom_free(s->bl);
    sim_free(s->models);
    blossom_free(s->bls);
    sim_free(s->e);
    sim_free(s->best);
    sim_free(s->rank);
    sim_free(s->pk);
    sim_free(s->pk2);
    sim_free(s->grp);
    sim_free(s->idx);
    sim_free(s->mate);
    sim_free(s->inplace);
    sim_free(s->claim);
    sim_free(s->nfree);
    sim_free(s->seg);
    sim_free(s->touched);
    sim_free(s->dirty);
    sim_free(s->is_dirty);
    sim_free(s->prof);
    sim_free(s->memo_key);
    sim_free(s->memo_off);
    sim_free(s->pool);
    sim_free(s->iter_key);
    sim_free(s->iter_val);
    sim_free(s->sig);
    sim_free(s->sorted);
    sim_free(s->used);
    sim_free(s->plist);
    cmatch_free(s->cm);
    sim_free(s->csig);
    sim_free(s->crep);
    sim_free(s->ccount);
    sim_free(s->cpairs);
    sim_free(s->cw);
    sim_free(s->crpairs);
    sim_free(s->taken);
    sim_free(s->cands);
    sim_free(s->ncount);
    sim_free(s->tnode);
    sim_free(s->tnode2);
    place_ws_fini(&s->ws);
}

/* The core does not call fini after a failed init: what init_state got is freed here. */
static int il_init(void *st, const policy_config *cfg, sim_diag *d)
{
    int rc = init_state(st, cfg, d);
    if (rc != SIM_OK)
        il_fini(st);
    return rc;
}

static bool grow(il_state *s)
{
    uint32_t ncap = s->cap ? s->cap * 2 : 64;
#define GROW(field)                                                                                \
    do {                                                                                           \
        void *p_ = sim_reallocarray(s->field, ncap, sizeof *s->field);                             \
        if (!p_)                                                                                   \
            return false;                                                                          \
        s->field = p_;                                                                             \
    } while (0)
    GROW(e);
    GROW(best);
    GROW(rank);
    GROW(pk);
    GROW(pk2);
    GROW(grp);
    GROW(idx);
    GROW(mate);
    GROW(inplace);
#undef GROW
    s->cap = ncap;
    return true;
}

static il_job *job_of(const sim_view *v, sim_job_id id)
{
    return sim_view_job_state(v, id);
}

static void il_arrival(void *st, const sim_view *v, sim_job_id id)
{
    il_state *s = st;
    if (s->n == s->cap && !grow(s)) {
        s->oom = true;
        return;
    }
    const sim_job *j = sim_view_job(v, id);
    il_entry *x = &s->e[s->n++];
    memset(x, 0, sizeof *x);
    bool any = false;
    for (int r = 0; r < IL_RESOURCES; r++)
        if (job_spec_has(&j->spec, il_stage_attr[r])) {
            x->stage[r] = j->spec.attr[il_stage_attr[r]];
            any = true;
        }
    if (!(any && il_solo_ms(x->stage) > 0)) {
        const il_model *m = model_profile(s, &j->spec);
        if (m) {
            memcpy(x->stage, m->stage, sizeof x->stage);
            any = true;
        }
    }
    x->ssum = any ? il_solo_ms(x->stage) : 0;
    x->solo = x->ssum;
    if (x->ssum > 0 && job_spec_has(&j->spec, SIM_ATTR_ITER_TIME_MS) &&
        j->spec.attr[SIM_ATTR_ITER_TIME_MS] > 0)
        x->solo = j->spec.attr[SIM_ATTR_ITER_TIME_MS];
    x->prof = 0;
    if (any && x->solo > 0) {
        uint32_t p = 0;
        while (p < s->n_prof && memcmp(s->prof[p], x->stage, sizeof x->stage) != 0)
            p++;
        if (p == s->n_prof) {
            if (s->n_prof == s->prof_cap) {
                uint32_t ncap = s->prof_cap ? 2 * s->prof_cap : 64;
                void *np = sim_reallocarray(s->prof, ncap, sizeof *s->prof);
                if (!np) {
                    s->oom = true;
                    return;
                }
                s->prof = np;
                s->prof_cap = ncap;
            }
            memcpy(s->prof[s->n_prof++], x->stage, sizeof x->stage);
        }
        x->prof = p + 1;
    }
    x->seq = j->seq;
    x->mask = j->spec.gpu_type_mask;
    x->cpu = j->cpu_per_replica;
    x->mem = j->mem_per_replica;
    x->gmem = j->spec.gpu_mem_mib;
    x->id = id;
    x->reps = j->nominal_replicas;
    x->gpr = j->gpus_per_replica;
    x->gpus = j->nominal_replicas * j->gpus_per_replica;
    s->n_gpuless += x->gpus == 0;
    il_job *pj = job_of(v, id);
    pj->listed = j->seq + 1;
    pj->tag = 0;
    pj->k = 0;
    pj->factor = 1.0;
}

static void il_finish(void *st, const sim_view *v, sim_job_id id)
{
    (void)st;
    job_of(v, id)->listed = 0;
}

/* A node failure sent the job back: it is no longer in its pack. */
static void il_requeue(void *st, const sim_view *v, sim_job_id id)
{
    (void)st;
    job_of(v, id)->tag = 0;
}

static uint32_t queue_for(const il_state *s, double a)
{
    uint32_t q = 0;
    while (q < s->n_thr && a >= s->thr[q])
        q++;
    return q;
}

static bool before(const il_state *s, const il_entry *a, const il_entry *b)
{
    if (s->ordering == 1 && s->n_thr && a->queue != b->queue)
        return a->queue < b->queue;
    if ((s->ordering == 0 || !s->n_thr) && a->key != b->key)
        return a->key < b->key;
    return a->seq < b->seq;
}

/* Drop the jobs that left, compute every key and sort the entries. The last pass's order
 * is kept, so an insertion sort costs O(jobs + moves). */
static uint32_t prioritise(il_state *s, const sim_view *v)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < s->n; i++) {
        il_entry x = s->e[i];
        if (job_of(v, x.id)->listed != x.seq + 1)
            continue;
        const sim_job *j = sim_view_job(v, x.id);
        if (s->ordering == 0) {
            x.key = sim_view_work_left(v, x.id) * (double)x.gpus;
        } else {
            sim_time held = j->placed_us;
            if (j->state == SIM_JOB_RUNNING && v->now > j->last_update_us)
                held += v->now - j->last_update_us;
            x.key = (double)held / 1e6 * (double)x.gpus;
            x.queue = queue_for(s, x.key);
        }
        x.cand = false;
        uint32_t k = n++;
        while (k > 0 && before(s, &x, &s->e[k - 1])) {
            s->e[k] = s->e[k - 1];
            k--;
        }
        s->e[k] = x;
    }
    s->n = n;
    return n;
}

static bool shortcuts_on = true;

void il_shortcuts_enable(bool on)
{
    shortcuts_on = on;
}

/* nfree[n] changed: its leaf in the tree follows, and empty_cluster will set the node
 * back (listed while few are: past dirty_max, it builds the empty cluster again
 * instead). */
static void seg_set(il_state *s, uint32_t n)
{
    maxtree_set(s->seg, s->seg_p, n, s->nfree[n]);
    if (s->n_dirty <= s->dirty_max && !s->is_dirty[n]) {
        s->is_dirty[n] = 1;
        s->dirty[s->n_dirty++] = n;
    }
}

/* First fit of `reps` replicas of `gpr` GPUs each on the empty copy of the cluster
 * (nfree): the nodes in index order, as many replicas on each as it holds, its GPUs
 * counted and, when cpu or mem is not 0 (milli-CPU and MiB per replica), its whole CPU
 * and memory, and when gmem is not 0 (MiB) only nodes whose GPUs have that much memory,
 * so that a pack never plans on a node where it could not start even alone; taken only
 * when all fit. The tree finds the next node with room in O(log nodes). */
static bool vfit(il_state *s, const sim_view *v, uint32_t reps, uint32_t gpr, uint64_t mask,
                 uint64_t cpu, uint64_t mem, uint64_t gmem)
{
    s->n_touched = 0;
    if (gpr == 0 || reps == 0)
        return true;
    if ((uint64_t)reps * gpr > s->free_total)
        return false; /* cannot fit: spare the walk over the nodes */
    uint32_t placed = 0, nt = 0, lim = v->n_nodes < s->n_nodes ? v->n_nodes : s->n_nodes;
    uint32_t n = shortcuts_on && gpr < IL_HINTS
                     ? maxtree_first_hinted(s->seg, s->seg_p, &s->hint[gpr], gpr)
                     : maxtree_first(s->seg, s->seg_p, 0, gpr);
    /* The next node is looked for only while replicas are left to place. */
    for (; n < lim; n = maxtree_first(s->seg, s->seg_p, n + 1, gpr)) {
        if ((mask && !((mask >> v->node_gpu_type[n]) & 1u)) ||
            (gmem && v->gpu_mem_total[v->node_gpu_first[n]] < gmem))
            continue;
        uint32_t c = 0;
        while (placed < reps && s->nfree[n] >= gpr &&
               (uint64_t)(c + 1) * cpu <= v->node_cpu_total[n] &&
               (uint64_t)(c + 1) * mem <= v->node_mem_total[n]) {
            s->nfree[n] -= gpr;
            placed++;
            c++;
        }
        seg_set(s, n);
        s->touched[nt] = n;
        s->taken[nt++] = c;
        if (placed == reps)
            break;
    }
    if (placed == reps) {
        s->free_total -= (uint64_t)reps * gpr;
        s->n_touched = nt;
        return true;
    }
    for (uint32_t i = 0; i < nt; i++) {
        s->nfree[s->touched[i]] += s->taken[i] * gpr;
        seg_set(s, s->touched[i]);
    }
    return false;
}

/* GPUs of node n on the empty cluster: all of them if it is up. */
static uint32_t empty_gpus(const sim_view *v, uint32_t n)
{
    return v->node_up[n] ? v->node_gpu_count[n] : 0;
}

/* nfree and seg as on the empty cluster: every up node's GPUs free. Set back node by node
 * where they changed since, O(nodes changed x log nodes), when few did (a big cluster
 * lightly used); built again from the nodes, O(nodes), when many did, or a node went
 * down or came back since (or never), which also reads the GPU types present. */
static void empty_cluster(il_state *s, const sim_view *v)
{
    uint32_t lim = v->n_nodes < s->n_nodes ? v->n_nodes : s->n_nodes;
    memset(s->hint, 0, sizeof s->hint);
    if (shortcuts_on && s->empty_built && s->empty_epoch == v->up_epoch &&
        s->n_dirty <= s->dirty_max) {
        for (uint32_t i = 0; i < s->n_dirty; i++) {
            uint32_t n = s->dirty[i];
            s->nfree[n] = empty_gpus(v, n);
            maxtree_set(s->seg, s->seg_p, n, s->nfree[n]);
            s->is_dirty[n] = 0;
        }
        s->n_dirty = 0;
        s->free_total = s->free_empty;
        return;
    }
    s->free_total = 0;
    s->present = 0;
    for (uint32_t n = 0; n < lim; n++) {
        s->nfree[n] = empty_gpus(v, n);
        s->free_total += s->nfree[n];
        s->seg[s->seg_p + n] = s->nfree[n];
        if (s->nfree[n] && v->node_gpu_type[n] < 64)
            s->present |= UINT64_C(1) << v->node_gpu_type[n];
    }
    maxtree_build(s->seg, s->seg_p);
    for (uint32_t i = 0; i < s->n_dirty; i++)
        s->is_dirty[s->dirty[i]] = 0;
    s->n_dirty = 0;
    s->free_empty = s->free_total;
    s->dirty_max = lim / 16;
    s->empty_epoch = v->up_epoch;
    s->empty_built = true;
}

/* CPU (milli) and memory (MiB) a replica of each member of p takes, summed: what one
 * replica of the pack needs on its node; and the GPU memory (MiB) the members ask of each
 * GPU they share, summed. */
static void pack_host(const il_state *s, const il_pack *p, uint64_t *cpu, uint64_t *mem,
                      uint64_t *gmem)
{
    *cpu = *mem = *gmem = 0;
    for (uint32_t q = 0; q < p->k; q++) {
        const il_entry *x = &s->e[p->m[q]];
        *cpu += x->cpu;
        *mem += x->mem;
        *gmem += x->gmem;
    }
}

/* Fit pack p on the empty copy of the cluster. With one GPU type allowed, first fit.
 * With several, the type that suits it: the allowed types in order of the progress its
 * members make there, the sum over members of their GPU type speed (the run's rate
 * model) x solo iteration time (1 for a member without a profile), which is the inverse
 * of the pack's iteration time scaled by the GPU's speed; ties to the lower type id.
 * It goes to the first type where it fits; when every type scores the same, or no one
 * type holds it, first fit over all of them. */
static bool plan_fit(il_state *s, const sim_view *v, il_pack *p, uint64_t present)
{
    const il_entry *x = &s->e[p->m[0]];
    p->type = 0;
    uint64_t cpu, mem, gmem;
    pack_host(s, p, &cpu, &mem, &gmem);
    uint64_t allowed = present & (x->mask ? x->mask : ~UINT64_C(0));
    if (x->gpr == 0 || (allowed & (allowed - 1)) == 0) /* one type allowed, or none */
        return vfit(s, v, x->reps, x->gpr, x->mask, cpu, mem, gmem);
    uint16_t ts[64];
    double sc[64];
    uint32_t nt = 0;
    bool same = true;
    for (uint16_t t = 0; t < 64; t++) {
        if (!((allowed >> t) & 1u))
            continue;
        double score = 0;
        for (uint32_t q = 0; q < p->k; q++) {
            const il_entry *y = &s->e[p->m[q]];
            score += sim_view_type_speed(v, y->id, t) * (y->solo > 0 ? y->solo : 1.0);
        }
        same = same && (nt == 0 || score == sc[0]);
        uint32_t i = nt++;
        while (i > 0 && sc[i - 1] < score) {
            sc[i] = sc[i - 1];
            ts[i] = ts[i - 1];
            i--;
        }
        sc[i] = score;
        ts[i] = t;
    }
    if (same)
        return vfit(s, v, x->reps, x->gpr, x->mask, cpu, mem, gmem);
    for (uint32_t i = 0; i < nt; i++)
        if (vfit(s, v, x->reps, x->gpr, UINT64_C(1) << ts[i], cpu, mem, gmem)) {
            p->type = ts[i];
            return true;
        }
    /* No one type holds all its replicas: first fit over every type it accepts, as when
     * the types score the same (else a job whose replicas need nodes of two types would
     * never be planned, and wait for ever). */
    return vfit(s, v, x->reps, x->gpr, x->mask, cpu, mem, gmem);
}

/* A pack's iteration time, ms, its overhead factor included: a job alone runs at its solo
 * iteration time, a pack at Muri's cycle time of its members' stages. */
static double pack_iter(const il_state *s, const uint32_t *m, uint32_t k)
{
    if (k == 1)
        return s->e[m[0]].solo * s->overhead[1];
    /* The cycle time depends on the multiset of profiles only: cached by their sorted
     * ids (16 bits each; a member without a usable id is computed afresh). */
    uint32_t id[IL_MAX_PACK];
    uint64_t sig = 0;
    for (uint32_t i = 0; i < k; i++) {
        id[i] = s->e[m[i]].prof;
        for (uint32_t q = i; q > 0 && id[q - 1] > id[q]; q--) {
            uint32_t t = id[q];
            id[q] = id[q - 1];
            id[q - 1] = t;
        }
    }
    for (uint32_t i = 0; i < k; i++)
        sig = id[i] && id[i] < 0xffff && sig != UINT64_MAX ? sig << 16 | id[i] : UINT64_MAX;
    uint32_t slot = (uint32_t)((sig * 0x9e3779b97f4a7c15ull) >> 52) & (IL_ITER_SLOTS - 1);
    if (sig != UINT64_MAX && s->iter_key[slot] == sig)
        return s->iter_val[slot] * s->overhead[k];
    double stage[IL_MAX_PACK][IL_RESOURCES];
    for (uint32_t i = 0; i < k; i++)
        memcpy(stage[i], s->e[m[i]].stage, sizeof stage[i]);
    double t = il_pack_iter_ms((const double(*)[IL_RESOURCES])stage, k);
    if (sig != UINT64_MAX) {
        s->iter_key[slot] = sig;
        s->iter_val[slot] = t;
    }
    return t * s->overhead[k];
}

/* The sum of the members' solo iteration times (overhead included), ms. */
static double pack_solo_sum(const il_state *s, const il_pack *p)
{
    double t = 0;
    for (uint32_t i = 0; i < p->k; i++)
        t += s->e[p->m[i]].solo * s->overhead[1];
    return t;
}

/* The sum of the members' stage times, ms. */
static double pack_stage_sum(const il_state *s, const il_pack *p)
{
    double t = 0;
    for (uint32_t i = 0; i < p->k; i++)
        t += s->e[p->m[i]].ssum;
    return t;
}

static bool pack_profiled(const il_state *s, const il_pack *p)
{
    for (uint32_t i = 0; i < p->k; i++)
        if (!(s->e[p->m[i]].solo > 0))
            return false;
    return true;
}

/* The utilisation of the resources by the union of packs a and b (Muri's edge weight). */
static double union_weight(const il_state *s, const il_pack *a, const il_pack *b)
{
    uint32_t m[IL_MAX_PACK];
    uint32_t k = 0;
    for (uint32_t i = 0; i < a->k; i++)
        m[k++] = a->m[i];
    for (uint32_t i = 0; i < b->k; i++)
        m[k++] = b->m[i];
    double it = pack_iter(s, m, k);
    return (pack_stage_sum(s, a) + pack_stage_sum(s, b)) / (it * IL_RESOURCES);
}

/* The signature of a pack: its members' profile ids, sorted, 16 bits each (0 when a
 * member has no profile or an id does not fit: such packs are matched afresh). */
static uint64_t pack_sig(const il_state *s, const il_pack *p)
{
    uint32_t id[IL_MAX_PACK];
    for (uint32_t i = 0; i < p->k; i++) {
        id[i] = s->e[p->m[i]].prof;
        if (id[i] == 0 || id[i] >= 0xffff)
            return 0;
        for (uint32_t q = i; q > 0 && id[q - 1] > id[q]; q--) {
            uint32_t t = id[q];
            id[q] = id[q - 1];
            id[q - 1] = t;
        }
    }
    uint64_t sig = 0;
    for (uint32_t i = 0; i < p->k; i++)
        sig = sig << 16 | id[i];
    return sig;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Pair the vertices from a list of matched signature pairs: each pair takes the first
 * unmatched vertex of each signature, in order. */
static void rebuild(il_state *s, uint32_t nv, const uint64_t *pairs, uint32_t np)
{
    for (uint32_t u = 0; u < nv; u++) {
        s->mate[u] = NONE;
        s->used[u] = 0;
    }
    for (uint32_t i = 0; i < np; i++) {
        uint32_t a = NONE, b = NONE;
        for (uint32_t u = 0; u < nv && (a == NONE || b == NONE); u++) {
            if (s->used[u])
                continue;
            if (a == NONE && s->sig[u] == pairs[2 * i])
                a = u;
            else if (b == NONE && s->sig[u] == pairs[2 * i + 1])
                b = u;
        }
        if (a == NONE || b == NONE)
            continue; /* cannot happen: the pairs came from this multiset */
        s->used[a] = s->used[b] = 1;
        s->mate[a] = b;
        s->mate[b] = a;
    }
}

/* The memo: records (header: tag, pairs; the sorted key signatures; the pairs of
 * signatures) found by the hash of the key, in a direct-mapped table over one pool. */
static uint64_t memo_hash(uint64_t tag, const uint64_t *key, uint32_t n)
{
    uint64_t h = 1469598103934665603ull ^ tag;
    for (uint32_t u = 0; u < n; u++) {
        h ^= key[u];
        h *= 1099511628211ull;
        h ^= h >> 29;
    }
    return h ? h : 1;
}

/* The pairs remembered for this key (np of them), or NULL. */
static const uint64_t *memo_find(const il_state *s, uint64_t h, uint64_t tag, const uint64_t *key,
                                 uint32_t n, uint32_t *np)
{
    uint32_t slot = (uint32_t)(h & (IL_MEMO_SLOTS - 1));
    if (s->memo_key[slot] != h)
        return NULL;
    const uint64_t *r = &s->pool[s->memo_off[slot]];
    if (r[0] != tag || memcmp(r + 2, key, n * sizeof *key) != 0)
        return NULL;
    *np = (uint32_t)r[1];
    return r + 2 + n;
}

static void memo_put(il_state *s, uint64_t h, uint64_t tag, const uint64_t *key, uint32_t n,
                     const uint64_t *pairs, uint32_t np)
{
    uint32_t need = 2 + n + 2 * np;
    if (need > IL_MEMO_POOL)
        return;
    if (s->pool_used + need > IL_MEMO_POOL) {
        memset(s->memo_key, 0, IL_MEMO_SLOTS * sizeof *s->memo_key);
        s->pool_used = 0;
    }
    uint64_t *r = &s->pool[s->pool_used];
    r[0] = tag;
    r[1] = np;
    memcpy(r + 2, key, n * sizeof *key);
    memcpy(r + 2 + n, pairs, 2 * np * sizeof *pairs);
    uint32_t slot = (uint32_t)(h & (IL_MEMO_SLOTS - 1));
    s->memo_key[slot] = h;
    s->memo_off[slot] = s->pool_used;
    s->pool_used += need;
}

/* Class of signature sig among the nc classes. */
static uint32_t class_of(const il_state *s, uint32_t nc, uint64_t sig)
{
    uint32_t c = 0;
    while (c < nc && s->csig[c] != sig)
        c++;
    return c;
}

static void add_pair(uint32_t *pairs, uint32_t nc, uint32_t a, uint32_t b)
{
    pairs[a * nc + b]++;
    if (a != b)
        pairs[b * nc + a]++;
}

/* Weight of the edge between packs a and b in the matching (0: none). */
static int64_t edge_weight(const il_state *s, const il_pack *a, const il_pack *b)
{
    if (a->k + b->k > s->max_pack || !pack_profiled(s, a) || !pack_profiled(s, b))
        return 0;
    int64_t wt = llround(union_weight(s, a, b) * IL_WEIGHT_SCALE);
    return wt > 0 ? wt : 0;
}

/* The whole graph of the nv packs in idx through the blossom, into s->mate. */
static void solve_whole(il_state *s, uint32_t nv)
{
    blossom_ws *bl = nv <= blossom_cap(s->bls) ? s->bls : s->bl;
    bool any = false;
    blossom_reset(bl, nv);
    for (uint32_t u = 0; u < nv; u++)
        for (uint32_t w = u + 1; w < nv; w++) {
            int64_t wt = edge_weight(s, &s->pk[s->idx[u]], &s->pk[s->idx[w]]);
            if (wt > 0) {
                blossom_set(bl, u, w, wt);
                any = true;
            }
        }
    if (any && blossom_solve(bl, s->mate) >= 0)
        return;
    s->oom = s->oom || any; /* the matching could not allocate */
    for (uint32_t u = 0; u < nv; u++)
        s->mate[u] = NONE;
}

/* The packs fall into few classes of equal signature (twins: the weights depend on
 * nothing else): match the classes (policies/classmatch.c, exact), into a list of
 * signature pairs in s->cpairs. False when the classes are too many to gain. */
static bool solve_classes(il_state *s, uint32_t nv, uint32_t *np)
{
    uint32_t nc = 0;
    for (uint32_t u = 0; u < nv; u++) {
        uint32_t c = 0;
        while (c < nc && s->csig[c] != s->sig[u])
            c++;
        if (c == nc) {
            if (nc == IL_CLASS_MAX || 2 * (nc + 1) > nv)
                return false;
            s->csig[c] = s->sig[u];
            s->crep[c] = u;
            s->ccount[c] = 0;
            nc++;
        }
        s->ccount[c]++;
    }
    for (uint32_t a = 0; a < nc; a++)
        for (uint32_t b = a; b < nc; b++) {
            int64_t wt = edge_weight(s, &s->pk[s->idx[s->crep[a]]], &s->pk[s->idx[s->crep[b]]]);
            s->cw[a * nc + b] = s->cw[b * nc + a] = wt;
        }
    /* The pairs kept from the fractional optimum; the vertices left are matched afresh,
     * their matchings remembered by the multiset of their signatures. */
    uint32_t left = cmatch_prepare(s->cm, nc, s->ccount, s->cw, s->cpairs);
    if (left >= 2) {
        const uint32_t *rc = cmatch_left(s->cm);
        uint32_t n = 0;
        for (uint32_t a = 0; a < nc; a++)
            for (uint32_t k = 0; k < rc[a]; k++)
                s->sorted[n++] = s->csig[a];
        qsort(s->sorted, n, sizeof *s->sorted, cmp_u64);
        uint64_t tag = IL_MEMO_LEFT | n;
        uint64_t h = memo_hash(tag, s->sorted, n);
        uint32_t rp = 0;
        const uint64_t *pr = memo_find(s, h, tag, s->sorted, n, &rp);
        if (pr) {
            for (uint32_t i = 0; i < rp; i++)
                add_pair(s->cpairs, nc, class_of(s, nc, pr[2 * i]), class_of(s, nc, pr[2 * i + 1]));
        } else {
            memset(s->crpairs, 0, (size_t)nc * nc * sizeof *s->crpairs);
            if (!cmatch_finish(s->cm, nc, s->cw, s->crpairs))
                s->oom = true;
            for (uint32_t a = 0; a < nc; a++)
                for (uint32_t b = a; b < nc; b++)
                    for (uint32_t k = 0; k < s->crpairs[a * nc + b]; k++) {
                        s->plist[2 * rp] = s->csig[a];
                        s->plist[2 * rp + 1] = s->csig[b];
                        rp++;
                        add_pair(s->cpairs, nc, a, b);
                    }
            memo_put(s, h, tag, s->sorted, n, s->plist, rp);
        }
    }
    *np = 0;
    for (uint32_t a = 0; a < nc; a++)
        for (uint32_t b = a; b < nc; b++)
            for (uint32_t k = 0; k < s->cpairs[a * nc + b]; k++) {
                s->plist[2 * *np] = s->csig[a];
                s->plist[2 * *np + 1] = s->csig[b];
                (*np)++;
            }
    return true;
}

/* Maximum-weight matching of the nv packs in idx, into s->mate (NONE: unmatched).
 * Graphs are remembered by the multiset of their vertices' signatures, and every
 * result, new or remembered, is laid on the vertices by rebuild() as a list of
 * signature pairs, so equal multisets get equal pairings whichever way they were found.
 * Packs of one signature are twins, so the matching is found over the signature classes
 * when they are few; otherwise (or when a pack has no signature) on the whole graph. */
static void solve(il_state *s, uint32_t nv)
{
    bool memo = true;
    for (uint32_t u = 0; u < nv; u++) {
        s->sig[u] = pack_sig(s, &s->pk[s->idx[u]]);
        memo = memo && s->sig[u] != 0;
        s->sorted[u] = s->sig[u];
    }
    if (!memo) {
        solve_whole(s, nv);
        return;
    }
    qsort(s->sorted, nv, sizeof *s->sorted, cmp_u64);
    uint64_t h = memo_hash(nv, s->sorted, nv);
    uint32_t np = 0;
    const uint64_t *pr = memo_find(s, h, nv, s->sorted, nv, &np);
    if (pr) {
        rebuild(s, nv, pr, np);
        return;
    }
    /* solve_classes uses s->sorted for its remainder: the key is made again after. */
    if (!solve_classes(s, nv, &np)) {
        solve_whole(s, nv);
        for (uint32_t u = 0; u < nv; u++)
            if (s->mate[u] != NONE && s->mate[u] > u) {
                s->plist[2 * np] = s->sig[u];
                s->plist[2 * np + 1] = s->sig[s->mate[u]];
                np++;
            }
    }
    for (uint32_t u = 0; u < nv; u++)
        s->sorted[u] = s->sig[u];
    qsort(s->sorted, nv, sizeof *s->sorted, cmp_u64);
    memo_put(s, h, nv, s->sorted, nv, s->plist, np);
    rebuild(s, nv, s->plist, np);
}

/* One round of matching over the packs of every group; merges matched pairs while the
 * packs need more GPUs than the cluster has. */
static void match_round(il_state *s, uint64_t *required, uint64_t cluster)
{
    uint32_t n2 = 0;
    for (uint32_t g = 0; g < s->n_grp; g++) {
        uint32_t n = 0;
        for (uint32_t i = 0; i < s->n_pk; i++)
            if (s->pk[i].group == g)
                s->idx[n++] = i;
        uint32_t nv = n < blossom_cap(s->bl) ? n : blossom_cap(s->bl);
        if (nv >= 2)
            solve(s, nv);
        for (uint32_t u = 0; u < n; u++) {
            uint32_t w = nv >= 2 && u < nv ? s->mate[u] : NONE;
            if (w != NONE && w > u)
                continue; /* taken with w, in w's turn */
            if (w == NONE) {
                s->pk2[n2++] = s->pk[s->idx[u]];
                continue;
            }
            il_pack a = s->pk[s->idx[w]], b = s->pk[s->idx[u]];
            if (*required > cluster) {
                for (uint32_t i = 0; i < b.k; i++)
                    a.m[a.k++] = b.m[i];
                *required -= s->grp[g].gpus;
                s->pk2[n2++] = a;
            } else {
                s->pk2[n2++] = a;
                s->pk2[n2++] = b;
            }
        }
    }
    il_pack *t = s->pk;
    s->pk = s->pk2;
    s->pk2 = t;
    s->n_pk = n2;
}

/* First-fit node score: every node that fits scores the same (ties: lowest id). */
static double first_fit(void *ctx, const sim_view *v, const sim_job *j, uint32_t n)
{
    (void)ctx;
    (void)v;
    (void)j;
    (void)n;
    return 0;
}

static uint32_t member_milli(const sim_job *j, uint32_t k)
{
    return k <= 1 ? j->spec.gpu_milli : SIM_MILLI_GPU / k;
}

/* member_factor's node for a running job: the node of its first allocation. */
#define IL_FIRST_ALLOC UINT32_MAX

/* The speed factor that makes member x of a pack on `node` run at solo / pack iteration
 * time, the core's share cap min(1, share / demand) divided out with the demand on that
 * node's GPU type (a pack spans types only when no one type holds it; the core then
 * runs it at its slowest GPU). A job alone or without a profile needs neither its record
 * nor its node. */
static double member_factor(const il_state *s, const sim_view *v, const il_pack *p,
                            const il_entry *x, uint32_t node)
{
    if (p->k <= 1 || !(x->solo > 0))
        return 1.0 / s->overhead[1];
    const sim_job *j = sim_view_job(v, x->id);
    if (node == IL_FIRST_ALLOC)
        node = j->alloc_head != UINT32_MAX ? v->allocs[j->alloc_head].node : 0;
    return il_share_factor(j, member_milli(j, p->k), sim_view_job_demand(v, x->id, node),
                           x->solo / p->iter);
}

double il_share_factor(const sim_job *j, uint32_t milli, uint32_t demand, double target)
{
    /* A service's speed is its speed factor alone (its work is the time it serves): the
     * core caps it by no share, so there is nothing to divide out. */
    if (j->is_service)
        return target;
    double cap = milli >= demand ? 1.0 : (double)milli / (double)demand;
    return target / cap;
}

static bool claim_tag(il_state *s, uint32_t tag, uint32_t pass)
{
    if (tag >= s->claim_cap) {
        uint32_t ncap = s->claim_cap ? s->claim_cap : 256;
        while (ncap <= tag)
            ncap *= 2;
        uint32_t *p = sim_reallocarray(s->claim, ncap, sizeof *p);
        if (!p) {
            s->oom = true;
            return false;
        }
        memset(p + s->claim_cap, 0, (ncap - s->claim_cap) * sizeof *p);
        s->claim = p;
        s->claim_cap = ncap;
    }
    if (s->claim[tag] == pass)
        return false;
    s->claim[tag] = pass;
    return true;
}

/* Whether pack p runs already, all of it and only it of its old pack's tag claimed. */
static bool keeps_place(il_state *s, const sim_view *v, const il_pack *p, uint32_t pass)
{
    uint32_t tag = 0;
    for (uint32_t i = 0; i < p->k; i++) {
        sim_job_id id = s->e[p->m[i]].id;
        const il_job *pj = job_of(v, id);
        if (sim_view_job(v, id)->state != SIM_JOB_RUNNING || pj->tag == 0 || pj->k < p->k ||
            (tag && pj->tag != tag))
            return false;
        tag = pj->tag;
    }
    return claim_tag(s, tag, pass);
}

/* The packs of the plan, most GPUs first, ties in the plan's order: a counting sort over
 * the few distinct GPU counts (a sort of the packs' ranks past IL_GPU_COUNTS of them). */
static void sort_by_gpus(il_state *s)
{
    uint32_t val[IL_GPU_COUNTS], at[IL_GPU_COUNTS], nv = 0, n = s->n_pk;
    for (uint32_t i = 0; i < n && nv <= IL_GPU_COUNTS; i++) {
        uint32_t j = 0;
        while (j < nv && val[j] != s->pk[i].gpus)
            j++;
        if (j == nv && nv < IL_GPU_COUNTS)
            val[nv] = s->pk[i].gpus;
        nv += j == nv;
    }
    if (nv <= IL_GPU_COUNTS) {
        /* The counts in decreasing order, each with the place of its first pack. */
        for (uint32_t i = 1; i < nv; i++)
            for (uint32_t j = i; j > 0 && val[j] > val[j - 1]; j--) {
                uint32_t t = val[j];
                val[j] = val[j - 1];
                val[j - 1] = t;
            }
        for (uint32_t j = 0; j < nv; j++)
            at[j] = 0;
        for (uint32_t i = 0; i < n; i++) {
            uint32_t j = 0;
            while (val[j] != s->pk[i].gpus)
                j++;
            at[j]++;
        }
        for (uint32_t j = 0, sum = 0; j < nv; j++) {
            uint32_t c = at[j];
            at[j] = sum;
            sum += c;
        }
        for (uint32_t i = 0; i < n; i++) {
            uint32_t j = 0;
            while (val[j] != s->pk[i].gpus)
                j++;
            s->pk2[at[j]++] = s->pk[i];
        }
    } else {
        for (uint32_t i = 0; i < n; i++)
            s->rank[i] = (uint64_t)(UINT32_MAX - s->pk[i].gpus) << 32 | i;
        qsort(s->rank, n, sizeof *s->rank, cmp_u64);
        for (uint32_t i = 0; i < n; i++)
            s->pk2[i] = s->pk[(uint32_t)s->rank[i]];
    }
    il_pack *t = s->pk;
    s->pk = s->pk2;
    s->pk2 = t;
}

/* Muri's placement of the plan (run_sim.py, multi_resource_blossom_same_sim_jobs): every
 * pack is placed afresh on an empty copy of the cluster, the packs with the most GPUs
 * first (ties: the plan's order), each first fit (its `yarn` scheme); a pack that does not
 * fit is left out. The nodes of each replica go to tnode[p->tn ..]. Returns the packs
 * kept, in that order, in s->pk. */
static void place_plan(il_state *s, const sim_view *v)
{
    if (s->n_pk > 1)
        sort_by_gpus(s);
    empty_cluster(s, v);
    uint32_t n = 0, used = 0;
    for (uint32_t i = 0; i < s->n_pk; i++) {
        const il_pack *p = &s->pk[i];
        const il_entry *x = &s->e[p->m[0]];
        uint64_t mask = p->type ? UINT64_C(1) << p->type : x->mask;
        uint64_t cpu, mem, gmem;
        pack_host(s, p, &cpu, &mem, &gmem);
        if (used + x->reps > s->tnode_cap || !vfit(s, v, x->reps, x->gpr, mask, cpu, mem, gmem))
            continue;
        /* Moved down in place (n <= i), its target set last, as above. */
        if (n != i)
            s->pk[n] = *p;
        s->pk[n++].tn = used;
        for (uint32_t t = 0; t < s->n_touched; t++)
            for (uint32_t c = 0; c < s->taken[t]; c++)
                s->tnode[used++] = s->touched[t];
    }
    s->n_pk = n;
}

/* Whether the running pack p holds its GPUs on the nodes the placement gave it (as many
 * GPUs on each). */
static bool on_target(il_state *s, const sim_view *v, const il_pack *p)
{
    const il_entry *x = &s->e[p->m[0]];
    const sim_job *j = sim_view_job(v, x->id);
    bool same = true;
    for (uint32_t r = 0; r < x->reps; r++)
        s->ncount[s->tnode[p->tn + r]] += x->gpr;
    for (uint32_t a = j->alloc_head; a != UINT32_MAX; a = v->allocs[a].next_in_job) {
        if (v->allocs[a].gpu == SIM_GPU_NONE)
            continue;
        uint32_t nd = v->allocs[a].node;
        if (nd >= s->n_nodes || s->ncount[nd] == 0)
            same = false;
        else
            s->ncount[nd]--;
    }
    for (uint32_t r = 0; r < x->reps; r++) {
        same = same && s->ncount[s->tnode[p->tn + r]] == 0;
        s->ncount[s->tnode[p->tn + r]] = 0;
    }
    return same;
}

/* Whether the packs of the placement that do not stay together (inplace[i] false) all fit,
 * in the placement's order and first fit, beside the packs that stay where they run; if
 * so their nodes replace the placement's in tnode. The same packs run either way; this
 * only spares moving the packs that stay together. */
static bool fit_beside(il_state *s, const sim_view *v)
{
    empty_cluster(s, v);
    for (uint32_t i = 0; i < s->n_pk; i++) {
        if (!s->inplace[i])
            continue;
        const il_entry *x = &s->e[s->pk[i].m[0]];
        if (x->reps == 1 && shortcuts_on) {
            /* Its gpr GPUs on one node, the one it started on (a running pack stays
             * where it started): as the walk below, without reading each allocation. */
            uint32_t nd = job_of(v, x->id)->node;
            if (nd < s->n_nodes && s->nfree[nd]) {
                uint32_t t = x->gpr < s->nfree[nd] ? x->gpr : s->nfree[nd];
                s->nfree[nd] -= t;
                seg_set(s, nd);
                s->free_total -= t;
            }
            continue;
        }
        const sim_job *j = sim_view_job(v, x->id);
        for (uint32_t a = j->alloc_head; a != UINT32_MAX; a = v->allocs[a].next_in_job) {
            uint32_t nd = v->allocs[a].node;
            if (v->allocs[a].gpu == SIM_GPU_NONE || nd >= s->n_nodes || s->nfree[nd] == 0)
                continue;
            s->nfree[nd]--;
            seg_set(s, nd);
            s->free_total--;
        }
    }
    for (uint32_t i = 0; i < s->n_pk; i++) {
        const il_pack *p = &s->pk[i];
        if (s->inplace[i])
            continue;
        const il_entry *x = &s->e[p->m[0]];
        uint64_t cpu, mem, gmem;
        pack_host(s, p, &cpu, &mem, &gmem);
        if (!vfit(s, v, x->reps, x->gpr, p->type ? UINT64_C(1) << p->type : x->mask, cpu, mem,
                  gmem))
            return false;
        uint32_t u = p->tn;
        for (uint32_t t = 0; t < s->n_touched; t++)
            for (uint32_t c = 0; c < s->taken[t]; c++)
                s->tnode2[u++] = s->touched[t];
    }
    for (uint32_t i = 0; i < s->n_pk; i++)
        if (!s->inplace[i])
            memcpy(&s->tnode[s->pk[i].tn], &s->tnode2[s->pk[i].tn],
                   s->e[s->pk[i].m[0]].reps * sizeof *s->tnode);
    return true;
}

/* The GPUs of pack p on its target nodes: per replica the lowest-index GPUs of its node
 * that nothing holds and that have gmem of memory free. False when they are not there
 * (the caller falls back to first fit). */
static bool target_placement(il_state *s, const sim_view *v, const il_pack *p, uint64_t gmem,
                             sim_placement *pl)
{
    const il_entry *x = &s->e[p->m[0]];
    uint32_t *gpus = s->ws.gpus;
    if (!gpus || (uint64_t)x->reps * x->gpr > s->ws.max_slots)
        return false;
    uint32_t k = 0;
    for (uint32_t r = 0; r < x->reps; r++) {
        uint32_t nd = s->tnode[p->tn + r], got = 0;
        if (!v->node_up[nd])
            return false;
        uint32_t g0 = v->node_gpu_first[nd];
        for (uint32_t g = g0; g < g0 + v->node_gpu_count[nd] && got < x->gpr; g++) {
            if (v->gpu_nres[g] || sim_view_gpu_free_mem(v, g) < gmem)
                continue;
            bool dup = false;
            for (uint32_t q = 0; q < k && !dup; q++)
                dup = gpus[q] == g;
            if (!dup) {
                gpus[k++] = g;
                got++;
            }
        }
        if (got < x->gpr)
            return false;
    }
    *pl = (sim_placement){.replicas = x->reps, .nodes = &s->tnode[p->tn], .gpus = gpus};
    return true;
}

/* Start pack p on the GPUs of its target nodes, else on the first node and GPUs where all
 * its members fit together. */
static int start_pack(il_state *s, const sim_view *v, il_pack *p, policy_decisions *out)
{
    sim_job_id lead = s->e[p->m[0]].id;
    const sim_job *jl = sim_view_job(v, lead);
    uint32_t m = member_milli(jl, p->k);
    uint32_t total = p->k <= 1 ? m : m * p->k;
    uint64_t gmem, cpu, mem;
    pack_host(s, p, &cpu, &mem, &gmem);
    /* On the GPU type the plan chose for it, when it chose one. */
    uint32_t nc = 0;
    if (p->type)
        for (uint32_t n = 0; n < v->n_nodes && n < s->n_nodes; n++)
            if (v->node_gpu_type[n] == p->type)
                s->cands[nc++] = n;
    sim_placement pl;
    if (!target_placement(s, v, p, gmem, &pl) &&
        !place_gang(&s->ws, v, lead, total, gmem, first_fit, NULL, PLACE_GPU_FIRST,
                    p->type ? s->cands : NULL, nc, &pl))
        return SIM_OK; /* waits */
    /* The other members' CPU and memory must fit beside the leader's on each node. */
    for (uint32_t r = 0; r < pl.replicas; r++) {
        uint32_t nd = pl.nodes[r], c = 0;
        for (uint32_t q = 0; q < pl.replicas; q++)
            c += pl.nodes[q] == nd;
        if (v->node_cpu_total[nd] - v->node_cpu_used[nd] < (uint64_t)c * cpu ||
            v->node_mem_total[nd] - v->node_mem_used[nd] < (uint64_t)c * mem)
            return SIM_OK;
    }
    uint32_t tag = s->next_tag++;
    if (s->next_tag == 0)
        s->next_tag = 1;
    for (uint32_t i = 0; i < p->k; i++) {
        sim_job_id id = s->e[p->m[i]].id;
        const sim_job *j = sim_view_job(v, id);
        sim_placement mp = pl;
        mp.milli = member_milli(j, p->k);
        mp.gpu_mem_mib = j->spec.gpu_mem_mib;
        int rc = sim_decide_start(out, id, &mp);
        il_job *pj = job_of(v, id);
        if (rc == SIM_OK) {
            pj->factor = member_factor(s, v, p, &s->e[p->m[i]], pl.nodes[0]);
            rc = sim_decide_speed_factor(out, id, pj->factor);
        }
        if (rc != SIM_OK)
            return rc;
        pj->tag = tag;
        pj->k = p->k;
        pj->node = pl.nodes[0];
    }
    return SIM_OK;
}

/* Whether some node could hold one replica of each member of p beside each other: their
 * CPU and memory per replica summed within the largest node's (of those with GPUs), and
 * the GPU memory they ask summed within the largest GPU's. A pack that fails this would wait for
 * ever (its members share GPUs, so they share nodes). */
static bool pack_fits(il_state *s, const sim_view *v, const il_pack *p)
{
    /* The largest of the nodes with GPUs: a pack of GPU jobs runs on no other. */
    for (uint32_t n = 0; !s->max_read && n < v->n_nodes; n++) {
        if (!v->node_gpu_count[n])
            continue;
        if (v->node_cpu_total[n] > s->max_cpu)
            s->max_cpu = v->node_cpu_total[n];
        if (v->node_mem_total[n] > s->max_mem)
            s->max_mem = v->node_mem_total[n];
        uint32_t g = v->node_gpu_first[n];
        for (uint32_t k = 0; k < v->node_gpu_count[n]; k++)
            if (v->gpu_mem_total[g + k] > s->max_gmem)
                s->max_gmem = v->gpu_mem_total[g + k];
    }
    s->max_read = true;
    uint64_t cpu, mem, gmem;
    pack_host(s, p, &cpu, &mem, &gmem);
    return cpu <= s->max_cpu && mem <= s->max_mem && gmem <= s->max_gmem;
}

static int il_schedule(void *st, const sim_view *v, sim_time now, policy_decisions *out)
{
    il_state *s = st;
    if (s->oom)
        return SIM_ENOMEM;
    s->last_pass = now;
    /* Muri packs GPU jobs: a job that requests none is rejected, with the reason. */
    for (uint32_t i = 0; s->n_gpuless && i < s->n; i++) {
        il_entry *x = &s->e[i];
        if (x->gpus || job_of(v, x->id)->listed != x->seq + 1)
            continue;
        job_of(v, x->id)->listed = 0;
        s->n_gpuless--;
        int rc =
            sim_decide_reject(out, x->id, "interleave packs GPU jobs only; this one requests none");
        if (rc != SIM_OK)
            return rc;
    }
    uint32_t n = prioritise(s, v);
    /* Groups by shape, in order of first appearance; entries linked in order. */
    s->n_grp = 0;
    for (uint32_t i = 0; i < n; i++) {
        il_entry *x = &s->e[i];
        uint32_t g = 0;
        while (g < s->n_grp &&
               (s->grp[g].reps != x->reps || s->grp[g].gpr != x->gpr || s->grp[g].mask != x->mask))
            g++;
        if (g == s->n_grp) {
            s->grp[g] = (il_group){.reps = x->reps,
                                   .gpr = x->gpr,
                                   .mask = x->mask,
                                   .head = i,
                                   .tail = i,
                                   .cursor = i,
                                   .gpus = x->gpus,
                                   .no_fit = false};
            s->n_grp++;
        } else {
            s->e[s->grp[g].tail].gnext = i;
            s->grp[g].tail = i;
        }
        x->group = g;
        x->gnext = NONE;
    }
    /* Candidates: slot by slot on the empty cluster. */
    empty_cluster(s, v);
    s->n_pk = 0;
    uint64_t required = 0, cluster = s->free_total;
    for (uint32_t i = 0; i < n && s->free_total > 0; i++) { /* full: nothing more fits */
        il_entry *x = &s->e[i];
        if (x->cand || x->gpus == 0)
            continue;
        il_group *g = &s->grp[x->group];
        if (g->no_fit || !vfit(s, v, x->reps, x->gpr, x->mask, 0, 0, 0)) {
            g->no_fit = true;
            continue;
        }
        for (uint32_t t = 0; t < s->max_pack && g->cursor != NONE; t++) {
            il_entry *c = &s->e[g->cursor];
            c->cand = true;
            s->pk[s->n_pk++] = (il_pack){.m = {g->cursor}, .k = 1, .group = x->group};
            required += c->gpus;
            g->cursor = c->gnext;
        }
    }
    /* Grouping. */
    for (uint32_t r = 0; r < s->max_pack && s->max_pack > 1 && required > cluster; r++)
        match_round(s, &required, cluster);
    /* Split packs slower than their jobs alone, and packs whose members' CPU or memory
     * per replica no node holds together, or whose GPU memory no GPU holds; order the
     * packs by their best member. */
    uint32_t np = 0;
    for (uint32_t i = 0; i < s->n_pk; i++) {
        /* Read in place and copied before its iteration time is set: a copy made after
         * would read that fresh 8-byte store back in a 16-byte load, which waits for it
         * to retire. */
        const il_pack *p = &s->pk[i];
        double iter = pack_iter(s, p->m, p->k);
        if (p->k > 1 && (iter > pack_solo_sum(s, p) || !pack_fits(s, v, p))) {
            for (uint32_t q = 0; q < p->k; q++) {
                il_pack *one = &s->pk2[np++];
                *one = (il_pack){.m = {p->m[q]}, .k = 1, .group = p->group};
                one->iter = pack_iter(s, one->m, 1);
            }
        } else {
            s->pk2[np] = *p;
            s->pk2[np++].iter = iter;
        }
    }
    /* The packs in the order of their best members: the entries are in priority order
     * already, and each is in one pack at most, so a pack's place is its first entry's. */
    for (uint32_t i = 0; i < n; i++)
        s->best[i] = NONE;
    for (uint32_t i = 0; i < np; i++) {
        il_pack *p = &s->pk2[i];
        uint32_t first = p->m[0];
        for (uint32_t q = 1; q < p->k; q++)
            first = p->m[q] < first ? p->m[q] : first;
        p->gpus = s->e[p->m[0]].gpus;
        s->best[first] = i;
    }
    /* The plan: packs that fit the empty cluster in that order. */
    empty_cluster(s, v);
    s->n_pk = 0;
    uint64_t present = s->present;
    for (uint32_t i = 0; i < n; i++)
        if (s->best[i] != NONE && plan_fit(s, v, &s->pk2[s->best[i]], present))
            s->pk[s->n_pk++] = s->pk2[s->best[i]];
    place_plan(s, v);
    /* Which packs keep their GPUs: those that stay together, when the others fit beside
     * them; else those that stay together on the nodes the placement gave them. Every
     * other running job stops. */
    uint32_t pass = ++s->pass ? s->pass : ++s->pass;
    for (uint32_t i = 0; i < s->n; i++)
        s->e[i].cand = false; /* reused: in a kept pack */
    for (uint32_t i = 0; i < s->n_pk; i++) {
        /* On the GPU type the plan chose for it, when it chose one. */
        const sim_job *j = sim_view_job(v, s->e[s->pk[i].m[0]].id);
        s->inplace[i] =
            keeps_place(s, v, &s->pk[i], pass) &&
            (!s->pk[i].type || (j->alloc_head != UINT32_MAX &&
                                v->node_gpu_type[v->allocs[j->alloc_head].node] == s->pk[i].type));
    }
    if (!fit_beside(s, v))
        for (uint32_t i = 0; i < s->n_pk; i++)
            s->inplace[i] = s->inplace[i] && on_target(s, v, &s->pk[i]);
    for (uint32_t i = 0; i < s->n_pk; i++) {
        if (s->inplace[i])
            for (uint32_t q = 0; q < s->pk[i].k; q++)
                s->e[s->pk[i].m[q]].cand = true;
    }
    if (s->oom)
        return SIM_ENOMEM;
    for (uint32_t i = 0; i < s->n; i++) {
        il_entry *x = &s->e[i];
        if (x->cand || sim_view_job(v, x->id)->state != SIM_JOB_RUNNING)
            continue;
        int rc = sim_decide_preempt(out, x->id, s->checkpoint);
        if (rc != SIM_OK)
            return rc;
        job_of(v, x->id)->tag = 0;
    }
    /* Kept packs: a member that left frees its share for the others. */
    for (uint32_t i = 0; i < s->n_pk; i++) {
        if (!s->inplace[i])
            continue;
        il_pack *p = &s->pk[i];
        for (uint32_t q = 0; q < p->k; q++) {
            sim_job_id id = s->e[p->m[q]].id;
            il_job *pj = job_of(v, id);
            int rc = SIM_OK;
            if (pj->k != p->k) {
                rc = sim_decide_set_share(out, id, member_milli(sim_view_job(v, id), p->k));
                pj->k = p->k;
            }
            /* The factor it has already would be no decision (the core's own test, made
             * here without reading the job's record). */
            double f = member_factor(s, v, p, &s->e[p->m[q]], IL_FIRST_ALLOC);
            if (rc == SIM_OK && f != pj->factor) {
                pj->factor = f;
                rc = sim_decide_speed_factor(out, id, f);
            }
            if (rc != SIM_OK)
                return rc;
        }
    }
    for (uint32_t i = 0; i < s->n_pk; i++) {
        if (s->inplace[i])
            continue;
        int rc = start_pack(s, v, &s->pk[i], out);
        if (rc != SIM_OK)
            return rc;
    }
    return SIM_OK;
}

/* Muri-L with queues: the first microsecond at which a running job's attained service
 * (time held x GPUs, as prioritise() counts it) reaches the next threshold, or never. */
static sim_time next_crossing(const il_state *s, const sim_view *v, sim_time now)
{
    sim_time next = SIM_TIME_NEVER;
    for (uint32_t i = 0; i < s->n; i++) {
        const il_entry *x = &s->e[i];
        if (x->gpus == 0 || job_of(v, x->id)->listed != x->seq + 1)
            continue;
        const sim_job *j = sim_view_job(v, x->id);
        if (j->state != SIM_JOB_RUNNING)
            continue;
        sim_time held = j->placed_us;
        if (now > j->last_update_us)
            held += now - j->last_update_us;
        double a = (double)held / 1e6 * (double)x->gpus;
        uint32_t q = queue_for(s, a);
        if (q == s->n_thr)
            continue;
        /* Never now: a rounding that leaves it just short retries a microsecond later. */
        double dt_us = ceil((s->thr[q] - a) / (double)x->gpus * 1e6);
        sim_time t = now + (dt_us < 1 ? 1 : dt_us < 1e15 ? (sim_time)dt_us : (sim_time)1e15);
        if (t < next)
            next = t;
    }
    return next;
}

static sim_time il_wakeup(const void *st, const sim_view *v, sim_time now)
{
    const il_state *s = st;
    sim_time next = SIM_TIME_NEVER;
    if (s->ordering == 1 && s->n_thr)
        next = next_crossing(s, v, now);
    if (s->interval_us <= 0 || s->last_pass == SIM_TIME_NEVER || (v->n_pending == 0))
        return next;
    sim_time t = s->last_pass + s->interval_us;
    if (t <= now)
        t = now + s->interval_us;
    return t < next ? t : next;
}

const policy_ops policy_interleave = {
    .abi_version = POLICY_ABI_VERSION,
    .name = "interleave",
    .summary = "Muri-style interleaved packing: jobs of the same shape grouped into packs of up "
               "to 4 by blossom matching on stage profiles, ordered by remaining (Muri-S) or "
               "attained (Muri-L) service, preemptive",
    .state_size = sizeof(il_state),
    .job_state_size = sizeof(il_job),
    .options = il_options,
    .init = il_init,
    .fini = il_fini,
    .on_arrival = il_arrival,
    .on_finish = il_finish,
    .on_requeue = il_requeue,
    .schedule = il_schedule,
    .next_wakeup = il_wakeup,
    .job_column = "profile_source",
    .job_value = il_job_value,
    .no_roles = true,
};
