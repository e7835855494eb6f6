/*
 * intern.c: open-addressing hash table (linear probing, power-of-two capacity, load
 * below 1/2) from strings to dense ids. Keys are copied into the table. Ids are given
 * in insertion order so the same input yields the same ids on every run.
 */
#include "base/intern.h"

#include "base/alloc.h"
#include "base/types.h"

#include <ctype.h>
#include <pthread.h>
#include <string.h>

typedef struct slot {
    char *key; /* NULL = empty */
    size_t len;
    uint32_t id;
} slot;

struct sim_intern {
    bool fold;
    slot *slots;
    size_t cap;     /* power of two */
    size_t used;    /* keys incl. aliases */
    char **names;   /* canonical name per id (borrowed from slots) */
    uint32_t count; /* ids */
    uint32_t names_cap;
    pthread_mutex_t *lock; /* set by sim_intern_share: every call holds it */
};

static void lock(const sim_intern *t)
{
    if (t->lock)
        pthread_mutex_lock(t->lock);
}

static void unlock(const sim_intern *t)
{
    if (t->lock)
        pthread_mutex_unlock(t->lock);
}

static uint64_t hash(const char *s, size_t len, bool fold)
{
    uint64_t h = UINT64_C(1469598103934665603);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (fold)
            c = (unsigned char)tolower(c);
        h = (h ^ c) * UINT64_C(1099511628211);
    }
    return h;
}

static bool key_eq(const slot *sl, const char *s, size_t len, bool fold)
{
    if (sl->len != len)
        return false;
    if (!fold)
        return memcmp(sl->key, s, len) == 0;
    for (size_t i = 0; i < len; i++)
        if (tolower((unsigned char)sl->key[i]) != tolower((unsigned char)s[i]))
            return false;
    return true;
}

static slot *probe(const sim_intern *t, const char *s, size_t len)
{
    size_t i = (size_t)hash(s, len, t->fold) & (t->cap - 1);
    while (t->slots[i].key && !key_eq(&t->slots[i], s, len, t->fold))
        i = (i + 1) & (t->cap - 1);
    return &t->slots[i];
}

static int grow(sim_intern *t)
{
    size_t ncap = t->cap * 2;
    slot *ns = sim_calloc(ncap, sizeof *ns);
    if (!ns)
        return SIM_ENOMEM;
    slot *old = t->slots;
    size_t ocap = t->cap;
    t->slots = ns;
    t->cap = ncap;
    for (size_t i = 0; i < ocap; i++) {
        if (old[i].key)
            *probe(t, old[i].key, old[i].len) = old[i];
    }
    sim_free(old);
    return SIM_OK;
}

static int insert(sim_intern *t, const char *s, size_t len, uint32_t id, slot **out)
{
    if ((t->used + 1) * 2 > t->cap && grow(t) != SIM_OK)
        return SIM_ENOMEM;
    slot *sl = probe(t, s, len);
    char *k = sim_malloc(len + 1);
    if (!k)
        return SIM_ENOMEM;
    memcpy(k, s, len);
    k[len] = '\0';
    sl->key = k;
    sl->len = len;
    sl->id = id;
    t->used++;
    *out = sl;
    return SIM_OK;
}

sim_intern *sim_intern_create(bool fold_case)
{
    sim_intern *t = sim_calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->fold = fold_case;
    t->cap = 16;
    t->slots = sim_calloc(t->cap, sizeof *t->slots);
    if (!t->slots) {
        sim_free(t);
        return NULL;
    }
    if (sim_intern_add(t, "", 0, 0) != 0) {
        sim_intern_destroy(t);
        return NULL;
    }
    return t;
}

int sim_intern_share(sim_intern *t)
{
    if (t->lock)
        return SIM_OK;
    pthread_mutex_t *m = sim_malloc(sizeof *m);
    if (!m)
        return SIM_ENOMEM;
    if (pthread_mutex_init(m, NULL) != 0) {
        sim_free(m);
        return SIM_ENOMEM;
    }
    t->lock = m;
    return SIM_OK;
}

void sim_intern_destroy(sim_intern *t)
{
    if (!t)
        return;
    if (t->lock) {
        pthread_mutex_destroy(t->lock);
        sim_free(t->lock);
    }
    for (size_t i = 0; i < t->cap; i++)
        sim_free(t->slots[i].key);
    sim_free(t->slots);
    sim_free(t->names);
    sim_free(t);
}

static uint32_t add_unlocked(sim_intern *t, const char *s, size_t len, uint32_t limit)
{
    slot *sl = probe(t, s, len);
    if (sl->key)
        return sl->id;
    if (limit && t->count >= limit)
        return SIM_INTERN_NONE;
    if (t->count == t->names_cap) {
        uint32_t ncap = t->names_cap ? t->names_cap * 2 : 16;
        char **nn = sim_reallocarray(t->names, ncap, sizeof *nn);
        if (!nn)
            return SIM_INTERN_NONE;
        t->names = nn;
        t->names_cap = ncap;
    }
    if (insert(t, s, len, t->count, &sl) != SIM_OK)
        return SIM_INTERN_NONE;
    t->names[t->count] = sl->key;
    return t->count++;
}

static int alias_unlocked(sim_intern *t, const char *s, size_t len, uint32_t id)
{
    if (id >= t->count)
        return SIM_EINVAL;
    slot *sl = probe(t, s, len);
    if (sl->key)
        return sl->id == id ? SIM_OK : SIM_EINVAL;
    return insert(t, s, len, id, &sl);
}

static uint32_t find_unlocked(const sim_intern *t, const char *s, size_t len)
{
    const slot *sl = probe(t, s, len);
    return sl->key ? sl->id : SIM_INTERN_NONE;
}

static const char *name_unlocked(const sim_intern *t, uint32_t id)
{
    return id < t->count ? t->names[id] : "";
}

static void list_unlocked(const sim_intern *t, const char *sep, char *buf, size_t size)
{
    size_t n = 0;
    if (size)
        buf[0] = '\0';
    for (uint32_t i = 1; i < t->count && n + 1 < size; i++) {
        const char *parts[2] = {i > 1 ? sep : "", t->names[i]};
        for (int p = 0; p < 2; p++) {
            size_t l = strlen(parts[p]);
            if (n + l + 1 > size)
                l = size - n - 1;
            memcpy(buf + n, parts[p], l);
            n += l;
            buf[n] = '\0';
        }
    }
}

uint32_t sim_intern_add(sim_intern *t, const char *s, size_t len, uint32_t limit)
{
    lock(t);
    uint32_t id = add_unlocked(t, s, len, limit);
    unlock(t);
    return id;
}

int sim_intern_alias(sim_intern *t, const char *s, size_t len, uint32_t id)
{
    lock(t);
    int st = alias_unlocked(t, s, len, id);
    unlock(t);
    return st;
}

uint32_t sim_intern_find(const sim_intern *t, const char *s, size_t len)
{
    lock(t);
    uint32_t id = find_unlocked(t, s, len);
    unlock(t);
    return id;
}

const char *sim_intern_name(const sim_intern *t, uint32_t id)
{
    lock(t);
    /* Names are stored one allocation each, so the pointer stays valid after the
     * table grows. */
    const char *n = name_unlocked(t, id);
    unlock(t);
    return n;
}

uint32_t sim_intern_count(const sim_intern *t)
{
    lock(t);
    uint32_t n = t->count;
    unlock(t);
    return n;
}

void sim_intern_list(const sim_intern *t, const char *sep, char *buf, size_t size)
{
    lock(t);
    list_unlocked(t, sep, buf, size);
    unlock(t);
}

