/*
 * groups.c: nodes grouped by exact state (see groups.h). A group's key is the node's
 * state written as words, its GPUs sorted, so nodes whose GPUs hold the same states in
 * another order share a group; the keys sit in an open-addressing table (linear
 * probing, backward-shift deletion). Members form an intrusive pairing heap per group
 * (Fredman, Sedgewick, Sleator and Tarjan, Algorithmica 1986): insertion O(1),
 * deletion O(log n) amortised, the least tie key at the root. Tie keys are distinct, so
 * the root does not depend on the heap's shape.
 */
#include "policies/groups.h"

#include "base/alloc.h"

#include <string.h>

#define NONE UINT32_MAX
#define HEAD_WORDS 5u
#define GPU_WORDS 3u

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= UINT64_C(0xbf58476d1ce4e5b9);
    x ^= x >> 27;
    x *= UINT64_C(0x94d049bb133111eb);
    x ^= x >> 31;
    return x;
}

int place_groups_init(place_groups *g, uint32_t n_nodes, uint32_t max_gpus, const uint32_t *tie,
                      place_gpu_tag tag, void *tag_ctx)
{
    memset(g, 0, sizeof *g);
    uint32_t nn = n_nodes ? n_nodes : 1;
    g->n_nodes = n_nodes;
    g->key_words = HEAD_WORDS + GPU_WORDS * max_gpus;
    g->tie = tie;
    g->tag = tag;
    g->tag_ctx = tag_ctx;
    uint32_t tsize = 16;
    while (tsize < 2 * (uint64_t)nn)
        tsize *= 2;
    g->table_mask = tsize - 1;
    size_t kw;
    if (!sim_mul_ok(nn, g->key_words, &kw))
        return SIM_ENOMEM;
    g->keys = sim_calloc(kw, sizeof *g->keys);
    g->hash = sim_calloc(nn, sizeof *g->hash);
    g->root = sim_calloc(nn, sizeof *g->root);
    g->size = sim_calloc(nn, sizeof *g->size);
    g->gen = sim_calloc(nn, sizeof *g->gen);
    g->sum = sim_calloc(nn, sizeof *g->sum);
    g->live = sim_calloc(nn, sizeof *g->live);
    g->live_pos = sim_calloc(nn, sizeof *g->live_pos);
    g->free_slots = sim_calloc(nn, sizeof *g->free_slots);
    g->table = sim_calloc(tsize, sizeof *g->table);
    g->node_group = sim_calloc(nn, sizeof *g->node_group);
    g->child = sim_calloc(nn, sizeof *g->child);
    g->sibling = sim_calloc(nn, sizeof *g->sibling);
    g->prev = sim_calloc(nn, sizeof *g->prev);
    g->scratch = sim_calloc(g->key_words, sizeof *g->scratch);
    g->key_mul = sim_calloc(g->key_words, sizeof *g->key_mul);
    if (!g->keys || !g->hash || !g->root || !g->size || !g->gen || !g->sum || !g->live ||
        !g->live_pos || !g->free_slots || !g->table || !g->node_group || !g->child || !g->sibling ||
        !g->prev || !g->scratch || !g->key_mul) {
        place_groups_fini(g);
        return SIM_ENOMEM;
    }
    /* Unrelated odd multipliers (a fixed splitmix64 sequence), so that keys differing in
     * a few words by related amounts do not sum to the same hash. */
    uint64_t x = 0;
    for (uint32_t i = 0; i < g->key_words; i++) {
        x += UINT64_C(0x9e3779b97f4a7c15);
        g->key_mul[i] = mix64(x) | 1;
    }
    return SIM_OK;
}

void place_groups_fini(place_groups *g)
{
    sim_free(g->key_mul);
    sim_free(g->keys);
    sim_free(g->hash);
    sim_free(g->root);
    sim_free(g->size);
    sim_free(g->gen);
    sim_free(g->sum);
    sim_free(g->live);
    sim_free(g->live_pos);
    sim_free(g->free_slots);
    sim_free(g->table);
    sim_free(g->node_group);
    sim_free(g->child);
    sim_free(g->sibling);
    sim_free(g->prev);
    sim_free(g->scratch);
    memset(g, 0, sizeof *g);
}

bool place_groups_fit_view(const place_groups *g, const sim_view *v)
{
    if (!g->keys || v->n_nodes != g->n_nodes || !v->change_ring)
        return false;
    uint32_t max_gpus = (g->key_words - HEAD_WORDS) / GPU_WORDS;
    for (uint32_t n = 0; n < v->n_nodes; n++)
        if (v->node_gpu_count[n] > max_gpus)
            return false;
    return true;
}

/* ---- The pairing heaps ------------------------------------------------------------ */

static inline bool tie_less(const place_groups *g, uint32_t a, uint32_t b)
{
    return g->tie ? g->tie[a] < g->tie[b] : a < b;
}

/* Meld two detached roots (no sibling, no parent); returns the new detached root. */
static uint32_t meld(place_groups *g, uint32_t a, uint32_t b)
{
    if (a == NONE)
        return b;
    if (b == NONE)
        return a;
    if (tie_less(g, b, a)) {
        uint32_t t = a;
        a = b;
        b = t;
    }
    uint32_t c = g->child[a];
    g->prev[b] = a;
    g->sibling[b] = c;
    if (c != NONE)
        g->prev[c] = b;
    g->child[a] = b;
    return a;
}

/* The two-pass merge of a list of siblings starting at first; returns a detached root. */
static uint32_t merge_pairs(place_groups *g, uint32_t first)
{
    uint32_t stack = NONE;
    for (uint32_t x = first; x != NONE;) {
        uint32_t a = x, b = g->sibling[a];
        x = b == NONE ? NONE : g->sibling[b];
        g->sibling[a] = g->prev[a] = NONE;
        if (b != NONE)
            g->sibling[b] = g->prev[b] = NONE;
        uint32_t m = meld(g, a, b);
        /* The pairs wait on a stack threaded through the sibling link. */
        g->sibling[m] = stack;
        stack = m;
    }
    uint32_t r = NONE;
    while (stack != NONE) {
        uint32_t next = g->sibling[stack];
        g->sibling[stack] = NONE;
        r = meld(g, stack, r);
        stack = next;
    }
    return r;
}

static void heap_insert(place_groups *g, uint32_t s, uint32_t n)
{
    g->child[n] = g->sibling[n] = g->prev[n] = NONE;
    g->root[s] = meld(g, g->root[s], n);
}

static void heap_remove(place_groups *g, uint32_t s, uint32_t n)
{
    if (g->root[s] == n) {
        g->root[s] = merge_pairs(g, g->child[n]);
    } else {
        uint32_t p = g->prev[n], nx = g->sibling[n];
        if (g->child[p] == n)
            g->child[p] = nx;
        else
            g->sibling[p] = nx;
        if (nx != NONE)
            g->prev[nx] = p;
        uint32_t sub = merge_pairs(g, g->child[n]);
        g->root[s] = meld(g, g->root[s], sub);
    }
    g->child[n] = g->sibling[n] = g->prev[n] = NONE;
}

/* ---- Keys and the table ----------------------------------------------------------- */

/* Whether GPU record a sorts after b (lexicographic by word). */
static inline bool gpu_after(const uint64_t *a, const uint64_t *b)
{
    for (uint32_t i = 0; i < GPU_WORDS; i++)
        if (a[i] != b[i])
            return a[i] > b[i];
    return false;
}

/* Node n's state as key words into g->scratch; returns its hash. Without tags, and
 * when the node's GPUs have one memory size (the usual node), the size is written once
 * and each GPU is one word, sorted; otherwise each GPU is GPU_WORDS words. A flag in the
 * first word keeps the two layouts apart. */
static uint64_t node_key(place_groups *g, const sim_view *v, uint32_t n)
{
    uint64_t *k = g->scratch;
    uint32_t first = v->node_gpu_first[n], cnt = v->node_gpu_count[n];
    memset(k, 0, g->key_words * sizeof *k);
    bool compact = !g->tag;
    for (uint32_t i = 1; i < cnt && compact; i++)
        compact = v->gpu_mem_total[first + i] == v->gpu_mem_total[first];
    k[0] = (uint64_t)v->node_up[n] | (uint64_t)v->node_gpu_type[n] << 8 | (uint64_t)cnt << 24 |
           (uint64_t)compact << 63;
    k[1] = v->node_cpu_total[n];
    k[2] = v->node_mem_total[n];
    k[3] = v->node_cpu_used[n];
    k[4] = v->node_mem_used[n];
    uint64_t *gw = k + HEAD_WORDS;
    uint32_t used;
    if (compact && cnt) {
        /* The memory size, then one word per GPU in ascending order. */
        gw[0] = v->gpu_mem_total[first];
        uint64_t *w1 = gw + 1;
        for (uint32_t i = 0; i < cnt; i++) {
            uint32_t gi = first + i;
            uint64_t w = (uint64_t)v->gpu_used_milli[gi] | (uint64_t)(v->gpu_nres[gi] > 0) << 11 |
                         v->gpu_used_mem[gi] << 12;
            uint32_t j = i;
            for (; j > 0 && w1[j - 1] > w; j--)
                w1[j] = w1[j - 1];
            w1[j] = w;
        }
        used = HEAD_WORDS + 1 + cnt;
    } else {
        /* Also a node without GPUs: the head alone. */
        for (uint32_t i = 0; i < cnt; i++) {
            uint32_t gi = first + i;
            uint64_t w[GPU_WORDS] = {(uint64_t)v->gpu_used_milli[gi] |
                                         (uint64_t)(v->gpu_nres[gi] > 0) << 11 |
                                         v->gpu_used_mem[gi] << 12,
                                     v->gpu_mem_total[gi], g->tag ? g->tag(g->tag_ctx, v, gi) : 0};
            /* Insertion sort of the GPU records (a node has few GPUs). */
            uint32_t j = i;
            while (j > 0 && gpu_after(gw + (j - 1) * GPU_WORDS, w)) {
                memcpy(gw + j * GPU_WORDS, gw + (j - 1) * GPU_WORDS, sizeof w);
                j--;
            }
            memcpy(gw + j * GPU_WORDS, w, sizeof w);
        }
        used = HEAD_WORDS + GPU_WORDS * cnt;
    }
    /* Each word times its own multiplier, summed, then mixed once: the products do not
     * wait on each other (keys with equal hashes are told apart by their words). */
    uint64_t acc = used;
    for (uint32_t i = 0; i < used; i++)
        acc += k[i] * g->key_mul[i];
    return mix64(acc);
}

/* The table index holding group slot s, or of the first empty entry on key's probe path
 * when no group has that key (*found tells which). */
static uint32_t table_find(const place_groups *g, const uint64_t *key, uint64_t h, bool *found)
{
    uint32_t i = (uint32_t)h & g->table_mask;
    for (;;) {
        uint32_t e = g->table[i];
        if (!e) {
            *found = false;
            return i;
        }
        uint32_t s = e - 1;
        if (g->hash[s] == h &&
            !memcmp(g->keys + (size_t)s * g->key_words, key, g->key_words * sizeof *key)) {
            *found = true;
            return i;
        }
        i = (i + 1) & g->table_mask;
    }
}

static void table_delete(place_groups *g, uint32_t i)
{
    g->table[i] = 0;
    for (uint32_t j = (i + 1) & g->table_mask; g->table[j]; j = (j + 1) & g->table_mask) {
        uint32_t home = (uint32_t)g->hash[g->table[j] - 1] & g->table_mask;
        /* Move entry j back to the hole unless its home lies cyclically in (i, j]. */
        bool stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (!stays) {
            g->table[i] = g->table[j];
            g->table[j] = 0;
            i = j;
        }
    }
}

/* The group with the key in g->scratch (hash h), created when none has it; ns is the
 * summary of a node with that key. */
static uint32_t group_get(place_groups *g, uint64_t h, const sim_node_sum *ns)
{
    bool found;
    uint32_t i = table_find(g, g->scratch, h, &found);
    if (found)
        return g->table[i] - 1;
    uint32_t s = g->free_slots[--g->n_free];
    memcpy(g->keys + (size_t)s * g->key_words, g->scratch, g->key_words * sizeof *g->scratch);
    g->hash[s] = h;
    g->root[s] = NONE;
    g->size[s] = 0;
    g->gen[s] = g->gen[s] + 1 ? g->gen[s] + 1 : 1;
    g->sum[s] = *ns;
    g->table[i] = s + 1;
    g->live_pos[s] = g->n_live;
    g->live[g->n_live++] = s;
    return s;
}

static void group_drop(place_groups *g, uint32_t s)
{
    bool found;
    uint32_t i = table_find(g, g->keys + (size_t)s * g->key_words, g->hash[s], &found);
    table_delete(g, i);
    uint32_t last = g->live[--g->n_live];
    g->live[g->live_pos[s]] = last;
    g->live_pos[last] = g->live_pos[s];
    g->free_slots[g->n_free++] = s;
}

static void node_file(place_groups *g, const sim_view *v, uint32_t n)
{
    uint64_t h = node_key(g, v, n);
    uint32_t s = group_get(g, h, &v->node_sum[n]);
    g->size[s]++;
    heap_insert(g, s, n);
    g->node_group[n] = s;
}

static void node_refile(place_groups *g, const sim_view *v, uint32_t n)
{
    uint64_t h = node_key(g, v, n);
    uint32_t s = g->node_group[n];
    if (g->hash[s] == h &&
        !memcmp(g->keys + (size_t)s * g->key_words, g->scratch, g->key_words * sizeof *g->scratch))
        return;
    heap_remove(g, s, n);
    if (--g->size[s] == 0)
        group_drop(g, s);
    s = group_get(g, h, &v->node_sum[n]);
    g->size[s]++;
    heap_insert(g, s, n);
    g->node_group[n] = s;
}

void place_groups_sync(place_groups *g, const sim_view *v)
{
    uint64_t now = v->change_epoch;
    if (g->built && now == g->synced)
        return;
    if (!g->built || now - g->synced > SIM_CHANGE_RING) {
        memset(g->table, 0, ((size_t)g->table_mask + 1) * sizeof *g->table);
        g->n_live = 0;
        g->n_free = g->n_nodes;
        /* Slots are taken from the top of the stack: lowest first, for readable dumps. */
        for (uint32_t s = 0; s < g->n_nodes; s++)
            g->free_slots[s] = g->n_nodes - 1 - s;
        for (uint32_t n = 0; n < g->n_nodes; n++)
            node_file(g, v, n);
        g->built = true;
    } else {
        for (uint64_t ep = g->synced + 1; ep <= now; ep++) {
            uint32_t n = v->change_ring[ep % SIM_CHANGE_RING];
            /* Each node once: at its latest change. */
            if (v->node_change_epoch[n] == ep)
                node_refile(g, v, n);
        }
    }
    g->synced = now;
}

void place_groups_hide(place_groups *g, uint32_t n)
{
    uint32_t s = g->node_group[n];
    heap_remove(g, s, n);
    g->size[s]--;
}

void place_groups_unhide(place_groups *g, uint32_t n)
{
    uint32_t s = g->node_group[n];
    g->size[s]++;
    heap_insert(g, s, n);
}
