/*
 * intern.h: string interning. Maps names (tenants, model classes, GPU types) to dense
 * ids 0..n-1 assigned in first-seen order, so runs are deterministic; id 0 is always
 * the empty string. Aliases map further names to an existing id. Lookups are O(1)
 * expected (open addressing, FNV-1a); the table owns copies of its strings.
 */
#ifndef BASE_INTERN_H
#define BASE_INTERN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct sim_intern sim_intern;

#define SIM_INTERN_NONE UINT32_MAX

/* Create an empty table (holding only "" as id 0). fold_case: ASCII case-insensitive
 * keys. Returns NULL on allocation failure. */
sim_intern *sim_intern_create(bool fold_case);
void sim_intern_destroy(sim_intern *t);

/* Make the table safe to use from several threads: from now on every call holds a
 * mutex. Returns SIM_OK or SIM_ENOMEM. Names returned by sim_intern_name stay valid for
 * the table's life. */
int sim_intern_share(sim_intern *t);

/* Id of s[0..len), inserting it as a new id when absent. Returns SIM_INTERN_NONE on
 * allocation failure or when `limit` ids exist already (limit 0 = no limit). */
uint32_t sim_intern_add(sim_intern *t, const char *s, size_t len, uint32_t limit);
/* Make s[0..len) another name of id. Returns 0, or a negative SIM_E* code. */
int sim_intern_alias(sim_intern *t, const char *s, size_t len, uint32_t id);
/* Id of s[0..len), or SIM_INTERN_NONE when absent. */
uint32_t sim_intern_find(const sim_intern *t, const char *s, size_t len);
/* Canonical name of id (the first name it was added with). */
const char *sim_intern_name(const sim_intern *t, uint32_t id);
/* Number of ids (aliases excluded). */
uint32_t sim_intern_count(const sim_intern *t);
/* Write every canonical name except "", joined by sep, into buf (truncated to size). */
void sim_intern_list(const sim_intern *t, const char *sep, char *buf, size_t size);

#endif
