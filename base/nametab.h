/*
 * nametab.h: an index of named entries by name, for entries whose names the owner keeps
 * (the table holds their indices only): open addressing with linear probing over a
 * power of two of slots, each an index + 1 (0: empty); erasing moves the entries after
 * the hole back where their probe allows, so no tombstones build up. The owner sizes
 * the slots (at least one more than the entries, twice as many for short probes) and
 * files the entries again into a larger table when it needs one.
 */
#ifndef BASE_NAMETAB_H
#define BASE_NAMETAB_H

#include <stdint.h>
#include <string.h>

/* The name of entry idx, as the owner keeps it. */
typedef const char *(*nametab_name_fn)(const void *ctx, uint32_t idx);

typedef struct nametab {
    uint32_t *slot; /* mask + 1 slots, owned by the caller */
    uint32_t mask;
} nametab;

static inline uint32_t nametab_hash(const char *name)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (const unsigned char *c = (const unsigned char *)name; *c; c++)
        h = (h ^ *c) * 16777619u;
    return h;
}

/* The entry named `name`, or UINT32_MAX. */
static inline uint32_t nametab_find(const nametab *t, const char *name, nametab_name_fn f,
                                    const void *ctx)
{
    for (uint32_t i = nametab_hash(name) & t->mask; t->slot[i]; i = (i + 1) & t->mask)
        if (strcmp(f(ctx, t->slot[i] - 1), name) == 0)
            return t->slot[i] - 1;
    return UINT32_MAX;
}

/* File entry idx under `name` (not filed yet; the table has an empty slot). */
static inline void nametab_insert(nametab *t, uint32_t idx, const char *name)
{
    uint32_t i = nametab_hash(name) & t->mask;
    while (t->slot[i])
        i = (i + 1) & t->mask;
    t->slot[i] = idx + 1;
}

/* Take entry idx, filed under `name`, out (nothing when it is not filed). */
static inline void nametab_erase(nametab *t, uint32_t idx, const char *name, nametab_name_fn f,
                                 const void *ctx)
{
    uint32_t m = t->mask, i = nametab_hash(name) & m;
    while (t->slot[i] != idx + 1) {
        if (!t->slot[i])
            return;
        i = (i + 1) & m;
    }
    for (uint32_t j = (i + 1) & m; t->slot[j]; j = (j + 1) & m) {
        uint32_t home = nametab_hash(f(ctx, t->slot[j] - 1)) & m;
        /* The entry at j fills the hole at i when i lies on its probe from home. */
        if (((j - home) & m) >= ((j - i) & m)) {
            t->slot[i] = t->slot[j];
            i = j;
        }
    }
    t->slot[i] = 0;
}

#endif
