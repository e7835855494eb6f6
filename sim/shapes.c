/*
 * shapes.c: the index of pending jobs by shape, and the release log. Jobs with the same
 * shape key (GPUs per replica, replicas, share, GPU memory, CPU and memory per replica,
 * GPU types) fit exactly where each other fit, so a policy can try one job per shape
 * and skip the rest when it fails. Shapes in use never outnumber pending jobs, so the
 * shape arrays are sized with the job pool and inserting never fails.
 *
 * The hash is open addressing with linear probing and backward-shift deletion (Knuth,
 * TAOCP vol. 3, 6.4 Algorithm R), so it never accumulates tombstones.
 */
#include "sim/engine_int.h"

#include "base/alloc.h"

#include <string.h>

static void key_of(const sim_job *j, shape_key *k)
{
    memset(k, 0, sizeof *k);
    k->gpr = j->gpus_per_replica;
    k->replicas = j->nominal_replicas;
    k->milli = j->spec.gpu_milli;
    k->gmem = j->spec.gpu_mem_mib;
    k->cpu = j->cpu_per_replica;
    k->mem = j->mem_per_replica;
    k->mask = j->spec.gpu_type_mask;
}

static uint32_t key_hash(const shape_key *k)
{
    uint64_t h = UINT64_C(1469598103934665603);
    const uint64_t v[7] = {k->gpr, k->replicas, k->milli, k->gmem, k->cpu, k->mem, k->mask};
    for (int i = 0; i < 7; i++)
        h = (h ^ v[i]) * UINT64_C(1099511628211);
    return (uint32_t)(h ^ (h >> 32));
}

static bool key_eq(const shape_key *a, const shape_key *b)
{
    return a->gpr == b->gpr && a->replicas == b->replicas && a->milli == b->milli &&
           a->gmem == b->gmem && a->cpu == b->cpu && a->mem == b->mem && a->mask == b->mask;
}

static void slot_insert(uint32_t *slots, uint32_t cap, const shape_key *keys, uint32_t id)
{
    uint32_t i = key_hash(&keys[id]) & (cap - 1);
    while (slots[i])
        i = (i + 1) & (cap - 1);
    slots[i] = id + 1;
}

int sim__shapes_grow(sim_engine *e, uint32_t ncap)
{
    shape_key *nk = sim_reallocarray(e->shape_keys, ncap, sizeof *nk);
    if (!nk)
        return SIM_ENOMEM;
    e->shape_keys = nk;
    uint32_t **arrs[6] = {&e->shape_head,  &e->shape_tail,   &e->shape_count,
                          &e->shape_gen,   &e->shape_active, &e->shape_pos};
    for (int a = 0; a < 6; a++) {
        uint32_t *na = sim_reallocarray(*arrs[a], ncap, sizeof *na);
        if (!na)
            return SIM_ENOMEM;
        *arrs[a] = na;
    }
    uint32_t scap = 16;
    while (scap < 2 * ncap)
        scap *= 2;
    uint32_t *slots = sim_calloc(scap, sizeof *slots);
    if (!slots)
        return SIM_ENOMEM;
    for (uint32_t s = 0; s < e->shape_cap; s++)
        if (e->shape_count[s])
            slot_insert(slots, scap, e->shape_keys, s);
    sim_free(e->shape_slots);
    e->shape_slots = slots;
    e->shape_slots_cap = scap;
    /* New ids join the free list (linked through shape_head) in increasing order. */
    for (uint32_t s = ncap; s-- > e->shape_cap;) {
        e->shape_count[s] = 0;
        e->shape_gen[s] = 0;
        e->shape_tail[s] = NIL;
        e->shape_head[s] = e->shape_free;
        e->shape_free = s;
    }
    e->shape_cap = ncap;
    return SIM_OK;
}

static uint32_t find_slot(const sim_engine *e, const shape_key *k)
{
    uint32_t mask = e->shape_slots_cap - 1;
    uint32_t i = key_hash(k) & mask;
    while (e->shape_slots[i] && !key_eq(&e->shape_keys[e->shape_slots[i] - 1], k))
        i = (i + 1) & mask;
    return i;
}

void sim__shape_attach(sim_engine *e, sim_job_id id)
{
    sim_job *j = &e->jobs[id];
    shape_key k;
    key_of(j, &k);
    uint32_t slot = find_slot(e, &k);
    uint32_t s;
    if (e->shape_slots[slot]) {
        s = e->shape_slots[slot] - 1;
    } else {
        s = e->shape_free;
        e->shape_free = e->shape_head[s];
        e->shape_keys[s] = k;
        e->shape_head[s] = e->shape_tail[s] = NIL;
        e->shape_count[s] = 0;
        e->shape_gen[s]++;
        e->shape_slots[slot] = s + 1;
        e->shape_pos[s] = e->shape_used;
        e->shape_active[e->shape_used++] = s;
        e->v.n_active_shapes = e->shape_used;
    }
    j->shape = s;
    j->shape_next = NIL;
    j->shape_prev = e->shape_tail[s];
    if (e->shape_tail[s] != NIL)
        e->jobs[e->shape_tail[s]].shape_next = id;
    else
        e->shape_head[s] = id;
    e->shape_tail[s] = id;
    e->shape_count[s]++;
}

void sim__shape_detach(sim_engine *e, sim_job_id id)
{
    sim_job *j = &e->jobs[id];
    uint32_t s = j->shape;
    if (j->shape_prev != NIL)
        e->jobs[j->shape_prev].shape_next = j->shape_next;
    else
        e->shape_head[s] = j->shape_next;
    if (j->shape_next != NIL)
        e->jobs[j->shape_next].shape_prev = j->shape_prev;
    else
        e->shape_tail[s] = j->shape_prev;
    if (--e->shape_count[s] > 0)
        return;
    /* The last pending job of the shape left: free the id, delete the key. */
    uint32_t mask = e->shape_slots_cap - 1;
    uint32_t i = find_slot(e, &e->shape_keys[s]);
    e->shape_slots[i] = 0;
    for (uint32_t k = (i + 1) & mask; e->shape_slots[k]; k = (k + 1) & mask) {
        uint32_t home = key_hash(&e->shape_keys[e->shape_slots[k] - 1]) & mask;
        /* Move the entry back unless its home lies cyclically in (i, k]. */
        bool stays = i <= k ? (home > i && home <= k) : (home > i || home <= k);
        if (stays)
            continue;
        e->shape_slots[i] = e->shape_slots[k];
        e->shape_slots[k] = 0;
        i = k;
    }
    e->shape_head[s] = e->shape_free;
    e->shape_tail[s] = NIL;
    e->shape_free = s;
    uint32_t last = e->shape_active[--e->shape_used];
    e->shape_active[e->shape_pos[s]] = last;
    e->shape_pos[last] = e->shape_pos[s];
    e->v.n_active_shapes = e->shape_used;
}

void sim__note_release(sim_engine *e, uint32_t node)
{
    uint64_t ep = ++e->v.release_epoch;
    e->release_ring[ep % SIM_RELEASE_RING] = node;
    e->node_release_epoch[node] = ep;
}
