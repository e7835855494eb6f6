/*
 * quota.h: what the `quota` policy (policies/quota.c) exposes of its per-job state, so
 * that tests and metrics can check its rules from the view: which jobs run as high
 * priority, which borrow beyond their tenant's quota, and how often a job was
 * preempted to give a quota back. Valid only in a run whose policy is `quota`, for
 * jobs in flight. And, for tests, the switches between the low pass's heap of sublists
 * and a walk of every sublist at each candidate, and between a reclaim's dry runs of
 * the nodes its bounds leave and of every node.
 */
#ifndef POLICIES_QUOTA_H
#define POLICIES_QUOTA_H

#include "sim/view.h"

/* Whether job id is scheduled as high priority (limited to its tenant's quota). */
bool policy_quota_job_is_high(const sim_view *v, sim_job_id id);
/* Whether job id was started beyond its tenant's quota (a borrower). */
bool policy_quota_job_is_borrower(const sim_view *v, sim_job_id id);
/* Times job id was preempted to give borrowed GPUs back. */
uint32_t policy_quota_job_reclaims(const sim_view *v, sim_job_id id);
/* Whether job id waits for the end of its tenant's profiling time. */
bool policy_quota_job_is_profiling(const sim_view *v, sim_job_id id);

/* Whether the low pass finds each tenant's next job through one heap of the shape
 * sublists of its low-priority jobs and of its high-priority ones beyond quota (the
 * default), or by a walk of every low-priority sublist and of the high-priority queue
 * at each candidate (the same job: tests compare the two). For every later run of the
 * process. */
void quota_low_heap_enable(bool on);

/* Whether a reclaim dry-runs only the nodes whose lower bound of cost does not rule them
 * out (the default) or every node (the same nodes are chosen: tests compare the two).
 * For every later run of the process. */
void quota_reclaim_bound_enable(bool on);

/* The serial after which the dry-run memo numbers its requests (default 0), so that tests
 * can make the serials wrap within a run. For every later run of the process. */
void quota_dry_serial_first(uint32_t last);

#endif
