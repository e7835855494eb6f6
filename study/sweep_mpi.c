/*
 * sweep_mpi.c: cells over MPI ranks (sweep_mpi.h). Protocol: a rank sends rank 0 a
 * request (tag REQ) carrying the result of its previous cell, if any; rank 0 answers
 * with the next cell's index (tag WORK), or -1 when none is left. Only rank 0's main
 * thread calls MPI; it polls for requests with MPI_Iprobe and a 1 ms nap, so it leaves
 * the core to the cells, and a second thread of rank 0 runs cells too.
 */
#include "study/sweep_mpi.h"

#include "study/proc.h"
#include "base/alloc.h"

#include <errno.h>
#include <mpi.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { TAG_REQ = 1, TAG_WORK = 2 };
#define SUMMARY_MAX (1 << 20)

typedef struct result_head {
    int32_t cell; /* -1: no result (first request) */
    int32_t exit_status;
    double wall_s;
} result_head;

typedef struct shared {
    sweep *s;
    pthread_mutex_t mu;
    size_t next; /* next cell index to look at */
    size_t done, failed;
} shared;

/* The next pending cell, or -1. */
static long take(shared *sh)
{
    pthread_mutex_lock(&sh->mu);
    long r = -1;
    while (sh->next < sh->s->g->n_cells && r < 0) {
        if (sh->s->cells[sh->next].state == SWEEP_PENDING)
            r = (long)sh->next;
        sh->next++;
    }
    pthread_mutex_unlock(&sh->mu);
    return r;
}

/* Run cell i here; returns its exit status. */
static int run_cell(sweep *s, size_t i, double *wall)
{
    char seed[24], log[1400];
    char *argv[GRID_CELL_ARGV];
    if (!sweep_cell_clear(s, i)) {
        *wall = 0;
        return STUDY_PROC_NOT_STARTED;
    }
    sweep_cell_argv(s, i, seed, argv);
    snprintf(log, sizeof log, "%s/sweep.log", s->cells[i].dir);
    study_proc p = {.argv = argv, .log_path = log};
    if (study_procs_run(&p, 1, 1, NULL, NULL) != 0)
        p.exit_status = STUDY_PROC_NOT_STARTED;
    *wall = p.wall_s;
    return p.exit_status;
}

static void *local_worker(void *arg)
{
    shared *sh = arg;
    for (long i; (i = take(sh)) >= 0;) {
        double wall;
        int es = run_cell(sh->s, (size_t)i, &wall);
        sweep_cell_finish(sh->s, (size_t)i, es, wall);
        pthread_mutex_lock(&sh->mu);
        sh->done++;
        sh->failed += sh->s->cells[i].state == SWEEP_FAILED;
        pthread_mutex_unlock(&sh->mu);
    }
    return NULL;
}

/* Rank 0: apply a worker's result; write its summary.json when this file system does
 * not have it (the ranks do not share one). */
static void apply_result(shared *sh, const char *buf, int len)
{
    result_head h;
    memcpy(&h, buf, sizeof h);
    sweep *s = sh->s;
    if (h.cell < 0 || (size_t)h.cell >= s->g->n_cells)
        return;
    sweep_cell *c = &s->cells[h.cell];
    const char *error = buf + sizeof h;
    size_t elen = strnlen(error, (size_t)len - sizeof h);
    const char *summary = error + elen + 1;
    size_t slen = (size_t)len - sizeof h - elen - 1;
    c->wall_s = h.wall_s;
    snprintf(c->error, sizeof c->error, "%.*s", (int)elen, error);
    c->state = *c->error ? SWEEP_FAILED : SWEEP_DONE;
    if (c->state == SWEEP_DONE && !sweep_cell_complete(c->dir)) {
        char tmp[1500], path[1400];
        snprintf(tmp, sizeof tmp, "%s/summary.json.tmp.%ld", c->dir, (long)getpid());
        snprintf(path, sizeof path, "%s/summary.json", c->dir);
        sweep_cell_clear(s, (size_t)h.cell);
        FILE *f = fopen(tmp, "w");
        bool ok = f && fwrite(summary, 1, slen, f) == slen;
        ok = f && fclose(f) == 0 && ok;
        if (!ok || rename(tmp, path) != 0) {
            remove(tmp);
            c->state = SWEEP_FAILED;
            snprintf(c->error, sizeof c->error, "its summary could not be written on rank 0");
        }
    }
    pthread_mutex_lock(&sh->mu);
    sh->done++;
    sh->failed += c->state == SWEEP_FAILED;
    pthread_mutex_unlock(&sh->mu);
}

static int run_root(sweep *s, int size, sweep_progress fn, void *ctx, sim_diag *d)
{
    shared sh = {.s = s};
    pthread_mutex_init(&sh.mu, NULL);
    /* SIGCHLD blocked here too, so that it waits for the thread's sigtimedwait (the
     * process runner's) instead of being discarded in this thread. */
    sigset_t chld, old_mask;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    pthread_sigmask(SIG_BLOCK, &chld, &old_mask);
    pthread_t th;
    bool thread = pthread_create(&th, NULL, local_worker, &sh) == 0;
    char *buf = sim_malloc(sizeof(result_head) + 600 + SUMMARY_MAX);
    int st = SIM_OK;
    if (!buf) {
        st = sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
        /* The workers still need their stop message. */
    }
    double t0 = study_wall_now(), tick = t0;
    int active = size - 1;
    while (active > 0) {
        int flag = 0;
        MPI_Status ms;
        MPI_Iprobe(MPI_ANY_SOURCE, TAG_REQ, MPI_COMM_WORLD, &flag, &ms);
        if (!flag) {
            struct timespec nap = {0, 1000 * 1000};
            nanosleep(&nap, NULL);
        } else {
            int len = 0;
            MPI_Get_count(&ms, MPI_BYTE, &len);
            char small[sizeof(result_head)];
            char *into =
                buf && (size_t)len <= sizeof(result_head) + 600 + SUMMARY_MAX ? buf : small;
            if (into == small)
                len = (int)sizeof small;
            MPI_Recv(into, len, MPI_BYTE, ms.MPI_SOURCE, TAG_REQ, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
            if (into == buf)
                apply_result(&sh, buf, len);
            int32_t next = st == SIM_OK ? (int32_t)take(&sh) : -1;
            MPI_Send(&next, 1, MPI_INT32_T, ms.MPI_SOURCE, TAG_WORK, MPI_COMM_WORLD);
            if (next < 0)
                active--;
        }
        double now = study_wall_now();
        if (fn && (flag || now - tick >= 0.25)) {
            tick = now;
            pthread_mutex_lock(&sh.mu);
            size_t done = sh.done, failed = sh.failed;
            pthread_mutex_unlock(&sh.mu);
            fn(ctx, s, done, failed, s->n_pending, now - t0);
        }
    }
    if (thread) {
        /* Progress while rank 0's own last cells finish. */
        for (;;) {
            pthread_mutex_lock(&sh.mu);
            size_t done = sh.done, failed = sh.failed;
            pthread_mutex_unlock(&sh.mu);
            if (fn)
                fn(ctx, s, done, failed, s->n_pending, study_wall_now() - t0);
            if (done >= s->n_pending || st != SIM_OK)
                break;
            struct timespec nap = {0, 250 * 1000 * 1000};
            nanosleep(&nap, NULL);
        }
        pthread_join(th, NULL);
    } else {
        local_worker(&sh);
    }
    pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
    pthread_mutex_destroy(&sh.mu);
    sim_free(buf);
    return st;
}

static int run_worker(sweep *s, sim_diag *d)
{
    char *buf = sim_malloc(sizeof(result_head) + 600 + SUMMARY_MAX);
    if (!buf)
        return sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
    result_head h = {.cell = -1};
    int len = (int)sizeof h;
    memcpy(buf, &h, sizeof h);
    for (;;) {
        MPI_Send(buf, len, MPI_BYTE, 0, TAG_REQ, MPI_COMM_WORLD);
        int32_t i;
        MPI_Recv(&i, 1, MPI_INT32_T, 0, TAG_WORK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (i < 0 || (size_t)i >= s->g->n_cells)
            break;
        h = (result_head){.cell = i};
        h.exit_status = run_cell(s, (size_t)i, &h.wall_s);
        sweep_cell_finish(s, (size_t)i, h.exit_status, h.wall_s);
        const sweep_cell *c = &s->cells[i];
        memcpy(buf, &h, sizeof h);
        size_t o = sizeof h;
        /* An empty error means done; a failure always has a reason. */
        snprintf(buf + o, 600, "%s", c->state == SWEEP_DONE ? "" : *c->error ? c->error : "failed");
        o += strlen(buf + o) + 1;
        if (c->state == SWEEP_DONE) {
            char p[1400];
            snprintf(p, sizeof p, "%s/summary.json", c->dir);
            FILE *f = fopen(p, "rb");
            if (f) {
                o += fread(buf + o, 1, SUMMARY_MAX, f);
                fclose(f);
            }
        }
        len = (int)o;
    }
    sim_free(buf);
    return SIM_OK;
}

int sweep_mpi_init(int *argc, char ***argv, int *rank, int *size, sim_diag *d)
{
    int provided;
    if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
        return sim_diag_set(d, SIM_EINVAL, NULL, 0, 0, "MPI_Init failed");
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
    const char *nt = getenv("SLURM_STEP_NUM_TASKS");
    if (*size == 1 && nt && atol(nt) > 1)
        return sim_diag_set(d, SIM_EINVAL, NULL, 0, 0,
                            "srun started %s tasks but MPI sees one process: launch with "
                            "`srun --mpi=pmix` (or pmi2), as `srun --mpi=list` shows",
                            nt);
    return SIM_OK;
}

int sweep_mpi_share(int v)
{
    MPI_Bcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return v;
}

void sweep_mpi_finalize(void)
{
    MPI_Finalize();
}

int sweep_run_mpi(sweep *s, sweep_progress fn, void *ctx, sim_diag *d)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    return rank == 0 ? run_root(s, size, fn, ctx, d) : run_worker(s, d);
}
