/*
 * interleave.h: the interleaving model of the `interleave` policy (policies/interleave.c),
 * exposed for tests and benchmarks.
 *
 * A job's iteration is profiled into stages by resource (storage I/O, CPU preprocessing,
 * GPU compute, network synchronisation; milliseconds). Jobs that share GPUs run their
 * stages in a cycle, each job on another resource at a time. The iteration time of a
 * pack is Muri's (its simulator's matching.py, _Packing.calc_iteration_time): the best
 * over the members' orders of their cycle, times the interleaving overhead measured for
 * its size.
 */
#ifndef POLICIES_INTERLEAVE_H
#define POLICIES_INTERLEAVE_H

#include <stdbool.h>
#include <stdint.h>

#define IL_RESOURCES 4 /* storage, cpu, gpu, net */
#define IL_MAX_PACK 4

/* A job's solo iteration time: the sum of its stage times. */
double il_solo_ms(const double stage[IL_RESOURCES]);

/* Iteration time of a pack of k jobs (1..IL_MAX_PACK), stage[i] the stages of member i,
 * before the overhead factor, as Muri computes it: the least over the members' orders of
 * the cycle time. When no member has a storage stage (three-stage profiles: cpu, gpu,
 * net), Muri's two-round slot recurrence (and, for two jobs, its order max(a.cpu, b.gpu +
 * b.net) + max(b.cpu, a.gpu + a.net)); otherwise four slots, slot r as long as the
 * longest stage (r - q) mod 4 of the member at position q. k = 1 gives the sum of the
 * stages. */
double il_pack_iter_ms(const double (*stage)[IL_RESOURCES], uint32_t k);

/* The speed factor that makes job j, holding `milli` of each of its GPUs, run at
 * `target` times its solo speed: the core's share cap min(1, milli / demand) divided out
 * (demand: what the job uses alone of a GPU of the type it runs on,
 * sim_view_job_demand); `target` itself for an online service, whose speed the core
 * takes from its factor alone. For every policy that packs jobs. */
struct sim_job;
double il_share_factor(const struct sim_job *j, uint32_t milli, uint32_t demand, double target);

/* Set the planning's copy of the empty cluster back node by node where a plan changed it
 * (true, the default, while few nodes changed), start each first fit of g GPUs where the
 * last one found the first node with g free, and take a one-replica pack that stays
 * where it runs off the node it started on; or build the copy from every node at every
 * point, search every first fit from the first node and read where each pack runs from
 * its allocations (false), for every engine of the process: to test the two against each
 * other. */
void il_shortcuts_enable(bool on);

#endif
