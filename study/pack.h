/*
 * pack.h: the fragmentation study of `clustersim pack` (Weng et al., "Beware of
 * Fragmentation", USENIX ATC 2023, §6): the trace's tasks resampled until their GPU
 * request reaches a share of the cluster's capacity, replayed as arrivals only, per
 * policy and seed; pack.csv and a figure in out_dir, the summary on stdout.
 */
#ifndef STUDY_PACK_H
#define STUDY_PACK_H

#include "sim/policy.h"

#include <stdbool.h>
#include <stdint.h>

#define PACK_MAX_POLICIES 32
#define PACK_MAX_SEEDS 10000
#define PACK_MAX_JOBS 256

typedef struct pack_config {
    const char *trace, *format; /* tasks to replay (format NULL = native) */
    const char *cluster;        /* node-list file or compact spec */
    const char *catalog;        /* NULL = the shipped one */
    const char *out_dir;        /* pack.csv and pack.png go here (it exists) */
    const char *const *names;   /* policies, n_pol of them (registered, checked) */
    const policy_config *pcfg;  /* their options */
    uint32_t n_pol;
    const uint64_t *seeds;
    uint32_t n_seeds;
    uint32_t demand; /* arrived GPU request to reach, % of capacity (1..1000) */
    uint32_t jobs;   /* worker processes (1..PACK_MAX_JOBS) */
    bool skip_bad_rows;
    bool figure; /* draw pack.png with gnuplot */
} pack_config;

/* Run the study. Returns the process exit status (0 done, 1 a cell failed, 2 bad input):
 * its worker processes report by their exit status, and every error is printed where
 * it happens. */
int study_pack(const pack_config *c);

#endif
