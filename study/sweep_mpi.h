/*
 * sweep_mpi.h: a sweep over the ranks of an MPI job (`mpirun -np K clustersim sweep
 * GRID`, or `srun` under Slurm). Rank 0 hands out cells one at a time to the ranks that
 * ask for the next (dynamic load balancing) and gathers their results, summary.json's
 * text included, so the aggregate is written on rank 0 whether or not the ranks share a
 * file system; rank 0 also runs cells itself in a second thread. Only in builds with
 * -DSIM_MPI=ON (SIM_HAVE_MPI defined). Library code: never prints.
 */
#ifndef STUDY_SWEEP_MPI_H
#define STUDY_SWEEP_MPI_H

#include "study/sweep.h"

/* MPI_Init and this process's rank and the job's size. Errors: SIM_EINVAL when the
 * launcher started several processes but MPI sees one (srun without --mpi=pmix). */
int sweep_mpi_init(int *argc, char ***argv, int *rank, int *size, sim_diag *d);
void sweep_mpi_finalize(void);

/* Rank 0's value of v, on every rank (a status every rank must act on). */
int sweep_mpi_share(int v);

/* Run the sweep's pending cells over the job's ranks (every rank calls it; the cells'
 * states are final on rank 0 only). fn is called on rank 0. */
int sweep_run_mpi(sweep *s, sweep_progress fn, void *ctx, sim_diag *d);

#endif
