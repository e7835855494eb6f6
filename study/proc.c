/*
 * proc.c: fork/exec of child processes with a concurrency bound (proc.h). Children are
 * reaped with waitpid(pid, WNOHANG), so only our own children are; between two rounds
 * the runner sleeps in sigtimedwait for SIGCHLD (blocked while it runs, at most 10 ms),
 * so a child that ends is noticed at once and the next one starts without delay, and a
 * live display can be refreshed while they run.
 */
#include "study/proc.h"

#include "base/outfile.h"

#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

double study_wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- Forwarding of signals to children ------------------------------------------- */

#define FWD_SLOTS 1024
/* Sequentially consistent atomics, not volatile: the thread that forks (under MPI, the
 * sweep's local worker) lists a child and then reads fwd_sig while the handler, on
 * another thread, sets fwd_sig and then reads the list; with both orders kept, one of
 * the two sees the other and the child gets the signal. Lock-free, so the handler may
 * use them. */
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "the signal handler needs lock-free atomics");
static _Atomic pid_t fwd_pid[FWD_SLOTS];
static _Atomic int fwd_sig;
static const int fwd_sigs[] = {SIGINT, SIGTERM, SIGHUP};
static struct sigaction fwd_old[3];
static bool fwd_on;

static void forward(int sig)
{
    if (!fwd_sig)
        fwd_sig = sig;
    for (int i = 0; i < FWD_SLOTS; i++)
        if (fwd_pid[i] > 0)
            kill(fwd_pid[i], sig);
}

void study_forward_begin(void)
{
    fwd_sig = 0;
    for (size_t k = 0; k < 3; k++) {
        struct sigaction sa = {.sa_handler = forward};
        sigemptyset(&sa.sa_mask);
        if (sigaction(fwd_sigs[k], NULL, &fwd_old[k]) == 0 && fwd_old[k].sa_handler != SIG_IGN)
            sigaction(fwd_sigs[k], &sa, NULL);
    }
    fwd_on = true;
}

int study_forward_signal(void)
{
    return fwd_sig;
}

void study_forward_end(void)
{
    if (!fwd_on)
        return;
    fwd_on = false;
    for (size_t k = 0; k < 3; k++)
        sigaction(fwd_sigs[k], &fwd_old[k], NULL);
    int sig = fwd_sig;
    if (sig) {
        sim_outfile_remove_temporaries();
        signal(sig, SIG_DFL);
        raise(sig);
    }
}

long study_fork(void)
{
    /* Signals wait until the child is listed, so none is lost between fork and list. */
    sigset_t all, old;
    sigemptyset(&all);
    for (size_t k = 0; k < 3; k++)
        sigaddset(&all, fwd_sigs[k]);
    sigprocmask(SIG_BLOCK, &all, &old);
    pid_t pid = fork();
    if (pid == 0) {
        for (size_t k = 0; k < 3; k++)
            if (fwd_on && fwd_old[k].sa_handler != SIG_IGN)
                signal(fwd_sigs[k], SIG_DFL);
        fwd_on = false;
        for (int i = 0; i < FWD_SLOTS; i++)
            fwd_pid[i] = 0;
    } else if (pid > 0) {
        for (int i = 0; i < FWD_SLOTS; i++)
            if (fwd_pid[i] == 0) {
                fwd_pid[i] = pid;
                break;
            }
        /* A signal that came before the fork reaches the new child too. */
        if (fwd_sig)
            kill(pid, fwd_sig);
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    return (long)pid;
}

void study_forget_child(long pid)
{
    for (int i = 0; i < FWD_SLOTS; i++)
        if (fwd_pid[i] == (pid_t)pid)
            fwd_pid[i] = 0;
}

/* What exec's failure errno means, without strerror: between fork and exec in a
 * threaded parent only async-signal-safe calls are safe (strerror may translate and
 * allocate, and a lock another thread held at the fork is never released here). */
static const char *exec_error(int e)
{
    switch (e) {
    case ENOENT:
        return "No such file or directory";
    case EACCES:
        return "Permission denied";
    case ENOEXEC:
        return "Exec format error";
    case ENOTDIR:
        return "Not a directory";
    case ENAMETOOLONG:
        return "File name too long";
    case ELOOP:
        return "Too many levels of symbolic links";
    case ETXTBSY:
        return "Text file busy";
    case E2BIG:
        return "Argument list too long";
    case ENOMEM:
        return "Cannot allocate memory";
    case EISDIR:
        return "Is a directory";
    default:
        return "the program could not be executed";
    }
}

/* Write s to fd with write(2) alone (async-signal-safe). */
static void put_fd(int fd, const char *s)
{
    size_t n = strlen(s);
    while (n > 0) {
        ssize_t w = write(fd, s, n);
        if (w <= 0)
            return;
        s += w;
        n -= (size_t)w;
    }
}

static void child_exec(const study_proc *p)
{
    /* The program starts with no signal blocked, whatever its parent blocks. */
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    int in = open("/dev/null", O_RDONLY);
    int out = open(p->log_path ? p->log_path : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0666);
    if (in >= 0) {
        dup2(in, 0);
        close(in);
    }
    if (out >= 0) {
        dup2(out, 1);
        dup2(out, 2);
        close(out);
    }
    if (p->search_path)
        execvp(p->argv[0], p->argv);
    else
        execv(p->argv[0], p->argv);
    int e = errno;
    put_fd(2, "clustersim: error: cannot run '");
    put_fd(2, p->argv[0]);
    put_fd(2, "': ");
    put_fd(2, exec_error(e));
    put_fd(2, "\n");
    _exit(STUDY_PROC_NOT_STARTED);
}

int study_procs_run(study_proc *p, size_t n, unsigned jobs, study_proc_notify notify, void *ctx)
{
    size_t next = 0, running = 0;
    int rc = 0;
    double last_tick = study_wall_now();
    if (jobs < 1)
        jobs = 1;
    for (size_t i = 0; i < n; i++)
        p[i].state = STUDY_PROC_WAITING;
    fflush(NULL);
    sigset_t chld, old_mask;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    pthread_sigmask(SIG_BLOCK, &chld, &old_mask);
    while (next < n || running > 0) {
        while (rc == 0 && next < n && running < jobs && !fwd_sig) {
            study_proc *c = &p[next];
            pid_t pid = (pid_t)study_fork();
            if (pid < 0) {
                rc = -1;
                break;
            }
            if (pid == 0)
                child_exec(c);
            c->pid = (long)pid;
            c->state = STUDY_PROC_RUNNING;
            c->start_s = study_wall_now();
            running++;
            if (notify)
                notify(ctx, p, n, next);
            next++;
        }
        if ((rc != 0 || fwd_sig) && running == 0)
            break;
        bool reaped = false;
        for (size_t i = 0; i < n; i++) {
            study_proc *c = &p[i];
            if (c->state != STUDY_PROC_RUNNING)
                continue;
            int status;
            pid_t w = waitpid((pid_t)c->pid, &status, WNOHANG);
            if (w == 0 || (w < 0 && errno == EINTR))
                continue;
            c->wall_s = study_wall_now() - c->start_s;
            study_forget_child(c->pid);
            if (w < 0)
                c->exit_status = STUDY_PROC_NOT_STARTED;
            else if (WIFEXITED(status))
                c->exit_status = WEXITSTATUS(status);
            else if (WIFSIGNALED(status))
                c->exit_status = 128 + WTERMSIG(status);
            else
                continue;
            c->state = STUDY_PROC_DONE;
            running--;
            reaped = true;
            if (notify)
                notify(ctx, p, n, i);
        }
        if (reaped)
            continue;
        struct timespec nap = {0, 10 * 1000 * 1000};
        sigtimedwait(&chld, NULL, &nap);
        double now = study_wall_now();
        if (notify && now - last_tick >= 0.25) {
            last_tick = now;
            notify(ctx, p, n, (size_t)-1);
        }
    }
    pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
    return rc;
}

char *study_last_line(const char *path, char *buf, size_t size)
{
    buf[0] = '\0';
    FILE *f = fopen(path, "rb");
    if (!f)
        return buf;
    /* The last line is within the file's final 4 KiB unless it is longer than that. */
    char tail[4096];
    if (fseek(f, 0, SEEK_END) == 0) {
        long end = ftell(f);
        fseek(f, end > (long)sizeof tail - 1 ? end - (long)sizeof tail + 1 : 0, SEEK_SET);
    }
    size_t n = fread(tail, 1, sizeof tail - 1, f);
    fclose(f);
    tail[n] = '\0';
    /* Progress lines end with '\r' and are overwritten: treat '\r' as a line end too. */
    while (n > 0 && strchr(" \t\r\n", tail[n - 1]))
        tail[--n] = '\0';
    size_t b = n;
    while (b > 0 && tail[b - 1] != '\n' && tail[b - 1] != '\r')
        b--;
    snprintf(buf, size, "%s", tail + b);
    return buf;
}
