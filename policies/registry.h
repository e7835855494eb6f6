/*
 * registry.h: every policy clustersim ships (policies/registry.c), by name.
 */
#ifndef POLICIES_REGISTRY_H
#define POLICIES_REGISTRY_H

#include "sim/policy.h"

/* All policies, NULL-terminated, and lookup. */
extern const policy_ops *const policy_all[];
const policy_ops *policy_find(const char *name);
/* The registered names, comma-separated, into buf (truncated to cap). */
void policy_known_names(char *buf, size_t cap);
/* Whether p declares the option named by the len bytes at key. */
bool policy_has_option(const policy_ops *p, const char *key, size_t len);
/* Whether that option names a file p writes (policy_ops.output_options). */
bool policy_option_writes(const policy_ops *p, const char *key, size_t len);

#endif
