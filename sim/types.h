/*
 * types.h: the plain data shared by every clustersim library — the job specification
 * a trace reader produces, on top of base/types.h (time, status codes, diagnostics).
 *
 * Time is an integer count of microseconds (sim_time). Job work is in seconds of solo
 * run time on the job's reference GPU type. Everything here is transparent data with
 * no invariants beyond those stated per field; traces/ and models/ depend on this file
 * and on nothing else of the core.
 */
#ifndef SIM_TYPES_H
#define SIM_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/types.h"

typedef uint32_t sim_job_id; /* dense handle of a job in flight; recycled after it ends */
#define SIM_JOB_NONE UINT32_MAX

#define SIM_MILLI_GPU 1000u  /* a whole GPU in milli-GPU */
#define SIM_MAX_GPU_TYPES 64 /* type ids 1..63 fit a uint64_t mask */
#define SIM_GPU_TYPE_NONE 0 /* type ids start at 1 */
#define SIM_ID_MAX 64 /* bytes of a job id, including the terminating NUL */

/* Quality of service classes found in traces. */
typedef enum sim_qos {
    SIM_QOS_NONE = 0, /* unspecified */
    SIM_QOS_LS,       /* latency-sensitive */
    SIM_QOS_BE,       /* best-effort */
    SIM_QOS_BURSTABLE,
    SIM_QOS_GUARANTEED,
    SIM_QOS_COUNT
} sim_qos;

/* "LS", "BE", ...; "" for SIM_QOS_NONE. */
const char *sim_qos_name(sim_qos q);
/* Parse a qos name (case-insensitive, "" -> NONE); false when unknown. */
bool sim_qos_parse(const char *s, size_t len, sim_qos *out);

/*
 * Optional numeric job attributes. Each is a native trace column of the same name
 * (lower case, given in sim_attr_name()). A reader sets the bit in attr_present for
 * each one it read; absent attributes are never invented.
 */
typedef enum sim_attr {
    SIM_ATTR_BATCH_SIZE = 0, /* samples per mini-batch */
    SIM_ATTR_ITERATIONS,     /* mini-batches (steps) to run */
    SIM_ATTR_INPUT_SIZE,     /* elements of one input sample */
    SIM_ATTR_OP_ADDV2,       /* graph features: largest input size per op type */
    SIM_ATTR_OP_CONV2D,
    SIM_ATTR_OP_MAXPOOL,
    SIM_ATTR_OP_RELU,
    SIM_ATTR_OP_MATMUL,
    SIM_ATTR_OP_AVGPOOL,
    SIM_ATTR_OP_MUL,
    SIM_ATTR_OP_CONCAT,
    SIM_ATTR_OP_SOFTMAX,
    SIM_ATTR_ITER_TIME_MS,     /* solo iteration time, milliseconds */
    SIM_ATTR_STAGE_STORAGE_MS, /* per-iteration time in storage I/O, ms */
    SIM_ATTR_STAGE_CPU_MS,     /* per-iteration time in CPU preprocessing, ms */
    SIM_ATTR_STAGE_GPU_MS,     /* per-iteration time in GPU compute, ms */
    SIM_ATTR_STAGE_NET_MS,     /* per-iteration time in network synchronisation, ms */
    SIM_ATTR_GPU_MEM_USED_MIB, /* true GPU memory use per GPU, MiB */
    SIM_ATTR_MIN_REPLICAS,     /* elastic jobs: fewest replicas */
    SIM_ATTR_MAX_REPLICAS,     /* elastic jobs: most replicas */
    SIM_ATTR_DEPTH,            /* model depth (layers) */
    SIM_ATTR_SLO_S,            /* completion-time target, seconds after submit */
    SIM_ATTR_EPOCHS,           /* epochs the job trains (its work spans them evenly) */
    /* Parameter-server jobs: a master and ps_replicas parameter servers besides the
     * trainers, CPU roles with their own resources (per master, per server). */
    SIM_ATTR_PS_REPLICAS,      /* parameter servers (0..65536) */
    SIM_ATTR_PS_CPU_MILLI,     /* CPU of one parameter server, milli-cores */
    SIM_ATTR_PS_MEM_MIB,       /* host memory of one parameter server, MiB */
    SIM_ATTR_MASTER_CPU_MILLI, /* CPU of the master, milli-cores */
    SIM_ATTR_MASTER_MEM_MIB,   /* host memory of the master, MiB */
    SIM_ATTR_COUNT
} sim_attr;

/* Column name of an attribute ("batch_size"). */
const char *sim_attr_name(sim_attr a);

/*
 * One job as a trace describes it. Readers fill it; the core copies what it keeps.
 * Resource requests: num_gpus GPUs in total, split into `replicas` equal replicas, each
 * replica on one node; cpu_milli and mem_mib are totals for the job, split evenly.
 */
typedef struct job_spec {
    char id[SIM_ID_MAX];     /* the trace's job id, NUL-terminated */
    sim_time submit_us;      /* arrival time */
    double work_s;           /* solo run time on ref_gpu_type, seconds (>= 0) */
    uint32_t num_gpus;       /* GPUs in total (0 = CPU-only job) */
    uint32_t replicas;       /* replicas; 0 = the core picks the fewest that fit a node */
    uint32_t gpu_milli;      /* requested share of each GPU, 1..1000 (0 for CPU-only) */
    uint32_t true_milli;     /* share each GPU would really use alone, 1..1000 */
    uint64_t gpu_mem_mib;    /* requested memory on each GPU, MiB (0 = unconstrained) */
    uint64_t cpu_milli;      /* CPU for the whole job, milli-cores */
    uint64_t mem_mib;        /* host memory for the whole job, MiB */
    uint64_t gpu_type_mask;  /* bit t set = GPU type t allowed; 0 = any type */
    uint16_t ref_gpu_type;   /* type work_s was measured on; SIM_GPU_TYPE_NONE = unknown */
    uint32_t tenant;         /* interned tenant (user, VC) id; 0 = "" */
    uint32_t model;          /* interned model-class id; 0 = "" */
    sim_qos qos;             /* service class */
    int32_t priority;        /* larger = more important; 0 default */
    uint64_t attr_present;   /* bit a set = attr[a] was given */
    double attr[SIM_ATTR_COUNT];
    /* Free text, borrowed from the reader and valid until its next call. */
    const char *name; /* job name ("" when absent) */
    const char *command; /* command line ("" when absent) */
    uint64_t line;       /* line of the trace that described the job (for messages) */
    /* Co-trained job group: jobs with the same non-empty id are submitted together and
     * the group is done when its last job is ("" = no group). NUL-terminated. */
    char group[SIM_ID_MAX];
} job_spec;

static inline bool job_spec_has(const job_spec *j, sim_attr a)
{
    return (j->attr_present >> a) & 1u;
}

/* The attributes that give a job a master and parameter servers. */
#define SIM_ATTR_ROLES_MASK                                                                        \
    ((UINT64_C(1) << SIM_ATTR_PS_REPLICAS) | (UINT64_C(1) << SIM_ATTR_PS_CPU_MILLI) |              \
     (UINT64_C(1) << SIM_ATTR_PS_MEM_MIB) | (UINT64_C(1) << SIM_ATTR_MASTER_CPU_MILLI) |           \
     (UINT64_C(1) << SIM_ATTR_MASTER_MEM_MIB))

/* Whether the job has a master and parameter servers (any of their columns given). */
static inline bool job_spec_has_roles(const job_spec *j)
{
    return (j->attr_present & SIM_ATTR_ROLES_MASK) != 0;
}

/* One node of a cluster description (what a cluster file or --cluster string gives). */
typedef struct node_spec {
    char name[SIM_ID_MAX]; /* node name (serial number), NUL-terminated */
    uint64_t cpu_milli;    /* CPU capacity, milli-cores */
    uint64_t mem_mib;      /* host memory, MiB */
    uint32_t num_gpus;     /* GPUs on the node (0 = CPU-only node) */
    uint16_t gpu_type;     /* catalog type id; SIM_GPU_TYPE_NONE when num_gpus == 0 */
    uint64_t gpu_mem_mib;  /* memory of each GPU, MiB (0 = the catalog's figure) */
    double net_gbps;       /* network bandwidth, Gbit/s (0 = unmodelled) */
} node_spec;

/* A cluster description: nodes in file order (node ids are their indices). */
typedef struct cluster_spec {
    uint32_t n_nodes;
    node_spec *nodes; /* owned by whoever created the spec */
} cluster_spec;

/* Demand curves of online services (traces/curves.h reads them): service s is the job
 * whose id is names[s]; its points are pts[first[s] .. first[s] + count[s]), in
 * increasing time; from a point's time on it wants that many replicas. A run with
 * curves requires every trace row of qos LS to have one and every curve to name a row
 * of qos LS (sim_engine_run fails with SIM_EPARSE otherwise). */
typedef struct sim_curve_point {
    sim_time t_us;
    uint32_t replicas;
} sim_curve_point;

typedef struct sim_curves {
    uint32_t n;   /* services */
    char **names; /* job ids */
    uint32_t *first, *count;
    sim_curve_point *pts;
    uint32_t n_pts;
    /* For messages: the file (NULL = none) and each service's first line in it (NULL =
     * unknown). */
    const char *path;
    const long *line;
} sim_curves;

#endif
