/*
 * cluster.c: cluster descriptions from a node-list CSV or a compact string.
 *
 * CSV columns (header required, any order): sn (or name), cpu_milli, memory_mib
 * (or mem_mib), gpu (or num_gpus), model (or gpu_type; empty or "nan" when gpu is 0),
 * optional gpu_mem_mib, net_gbps and count (the row stands for `count` identical nodes,
 * named sn-0, sn-1, ...). This is also the Alibaba openb node-list format.
 *
 * Also detected by their first line: Tiresias/Muri switch specs and PAI machine specs
 * (with or without header), see cluster.h.
 *
 * Compact: comma-separated groups "N x TYPE : GPUS[:cpu=MILLI][:mem=MIB][:gpumem=MIB]",
 * e.g. "4xV100M32:8,16xT4:2". CPU and memory default to unlimited, so only GPUs
 * constrain placement unless they are given.
 */
#include "traces/cluster.h"

#include "base/alloc.h"
#include "base/csvin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define UNLIMITED (UINT64_C(1) << 50)
#define MAX_NODES (1u << 22)

void cluster_spec_destroy(cluster_spec *c)
{
    if (!c)
        return;
    sim_free(c->nodes);
    sim_free(c);
}

uint64_t cluster_spec_gpus(const cluster_spec *c)
{
    uint64_t n = 0;
    for (uint32_t i = 0; i < c->n_nodes; i++)
        n += c->nodes[i].num_gpus;
    return n;
}

typedef struct builder {
    cluster_spec *c;
    uint32_t cap;
    uint64_t *lines;  /* the file line of each node (its row's; 0: from a compact string) */
    int32_t name_col; /* the column of node names in the file (-1: none) */
    const char *dup_hint; /* appended to the message about a name given twice */
    char *ignored;    /* header columns of a node list that name no column, or NULL */
    size_t ignored_size;
} builder;

static node_spec *add_node(builder *b, uint64_t line)
{
    if (b->c->n_nodes == b->cap) {
        uint32_t ncap = b->cap ? b->cap * 2 : 64;
        node_spec *nn = sim_reallocarray(b->c->nodes, ncap, sizeof *nn);
        if (!nn)
            return NULL;
        b->c->nodes = nn;
        uint64_t *nl = sim_reallocarray(b->lines, ncap, sizeof *nl);
        if (!nl)
            return NULL;
        b->lines = nl;
        b->cap = ncap;
    }
    b->lines[b->c->n_nodes] = line;
    node_spec *n = &b->c->nodes[b->c->n_nodes++];
    memset(n, 0, sizeof *n);
    return n;
}

typedef struct named {
    const char *name;
    uint32_t i;
} named;

static int by_name(const void *a, const void *b)
{
    const named *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : (x->i > y->i) - (x->i < y->i);
}

/* Node names identify nodes in every output: each must be given once. */
static int check_unique_names(const builder *b, const char *path, sim_diag *d)
{
    uint32_t n = b->c->n_nodes;
    named *ix = sim_reallocarray(NULL, n ? n : 1, sizeof *ix);
    if (!ix)
        return sim_diag_set(d, SIM_ENOMEM, path, 0, 0, "out of memory");
    for (uint32_t i = 0; i < n; i++)
        ix[i] = (named){b->c->nodes[i].name, i};
    qsort(ix, n, sizeof *ix, by_name);
    int st = SIM_OK;
    for (uint32_t i = 1; i < n && st == SIM_OK; i++)
        if (strcmp(ix[i - 1].name, ix[i].name) == 0)
            st = sim_diag_set(d, SIM_EPARSE, path, b->lines[ix[i].i], b->name_col + 1,
                              "node name '%s' is given twice (first on line %llu)%s", ix[i].name,
                              (unsigned long long)b->lines[ix[i - 1].i], b->dup_hint);
    sim_free(ix);
    return st;
}

static int resolve_type(const sim_intern *types, const char *s, size_t len, uint16_t *out)
{
    uint32_t t = sim_intern_find(types, s, len);
    if (t == SIM_INTERN_NONE || t == 0 || t >= SIM_MAX_GPU_TYPES)
        return SIM_EPARSE;
    *out = (uint16_t)t;
    return SIM_OK;
}

enum { K_SN, K_CPU, K_MEM, K_GPU, K_MODEL, K_GPUMEM, K_NET, K_COUNT, K_N };

/* `none` names what a GPU-less node may give instead (NULL: the node has GPUs). */
static int known_type_error(const csvin *in, const csvin_row *row, int32_t col, const char *name,
                            const sim_intern *types, const char *none, sim_diag *d)
{
    char known[600], what[800];
    sim_intern_list(types, ", ", known, sizeof known);
    if (none)
        snprintf(what, sizeof what, "%s (the node has no GPU), or a known GPU type (%s)", none,
                 known);
    else
        snprintf(what, sizeof what, "a known GPU type (%s)", known);
    return csvin_field_error(in, row, col, name, what, d);
}

/* Tiresias/Muri spec rows: num_switch,num_node_p_switch,num_gpu_p_node,num_cpu_p_node,
 * mem_p_node. */
static int load_switch_spec(builder *b, csvin *in, const int32_t *ix, uint16_t type,
                            uint32_t n_header, sim_diag *d)
{
    static const char *const names[5] = {"num_switch", "num_node_p_switch", "num_gpu_p_node",
                                         "num_cpu_p_node", "mem_p_node"};
    csvin_row row;
    int st;
    while ((st = csvin_next(in, &row, d)) == 1) {
        if ((st = csvin_row_width(in, &row, n_header, d)))
            return st;
        uint64_t v[5];
        for (int k = 0; k < 5; k++) {
            uint64_t max = k == 2 ? 1024 : k == 4 ? UINT64_C(1) << 30 : k == 3 ? 1u << 20 : MAX_NODES;
            if ((st = csvin_u64(in, &row, ix[k], names[k], k < 2 ? 1 : 0, max, &v[k], d)))
                return st;
        }
        if (b->c->n_nodes + v[0] * v[1] > MAX_NODES)
            return sim_diag_set(d, SIM_ELIMIT, csvin_path(in), row.line, 0, "more than %u nodes",
                                MAX_NODES);
        for (uint64_t sw = 0; sw < v[0]; sw++)
            for (uint64_t k = 0; k < v[1]; k++) {
                node_spec *n = add_node(b, row.line);
                if (!n)
                    return sim_diag_set(d, SIM_ENOMEM, csvin_path(in), row.line, 0,
                                        "out of memory");
                snprintf(n->name, sizeof n->name, "s%llu-n%03llu", (unsigned long long)sw,
                         (unsigned long long)k);
                n->num_gpus = (uint32_t)v[2];
                n->gpu_type = v[2] ? type : SIM_GPU_TYPE_NONE;
                n->cpu_milli = v[3] * 1000;
                n->mem_mib = v[4] * 1024;
            }
    }
    return st;
}

/* One PAI machine row: machine,gpu_type,cap_cpu,cap_mem,cap_gpu (cores, GB). */
static int pai_machine(builder *b, const csvin *in, const csvin_row *row,
                       const sim_intern *types, sim_diag *d)
{
    static const char *const names[5] = {"machine", "gpu_type", "cap_cpu", "cap_mem", "cap_gpu"};
    if (row->n != 5)
        return sim_diag_set(
            d, SIM_EPARSE, csvin_path(in), row->line, (int)(row->n < 5 ? row->n : 5) + 1,
            "expected the 5 fields machine,gpu_type,cap_cpu,cap_mem,cap_gpu, got %u", row->n);
    if (csvin_empty(row, 0) || row->len[0] >= SIM_ID_MAX)
        return csvin_field_error(in, row, 0, names[0], "a machine name of 1..63 bytes", d);
    uint64_t cpu, gpus;
    double mem;
    int st;
    if ((st = csvin_u64(in, row, 2, names[2], 0, UINT64_C(1) << 30, &cpu, d)) ||
        (st = csvin_double(in, row, 3, names[3], 0, 1e9, &mem, d)) ||
        (st = csvin_u64(in, row, 4, names[4], 0, 1024, &gpus, d)))
        return st;
    uint16_t t = SIM_GPU_TYPE_NONE;
    bool cpu_only = row->len[1] == 3 && strncmp(row->f[1], "CPU", 3) == 0;
    if (gpus && (cpu_only || resolve_type(types, row->f[1], row->len[1], &t)))
        return known_type_error(in, row, 1, names[1], types, NULL, d);
    /* A GPU-less machine's type is not used, but one that names no GPU is a mistake. */
    if (!gpus && !cpu_only && !csvin_empty(row, 1) &&
        resolve_type(types, row->f[1], row->len[1], &t))
        return known_type_error(in, row, 1, names[1], types, "CPU or empty", d);
    t = gpus ? t : SIM_GPU_TYPE_NONE;
    node_spec *n = add_node(b, row->line);
    if (!n)
        return sim_diag_set(d, SIM_ENOMEM, csvin_path(in), row->line, 0, "out of memory");
    b->name_col = 0;
    memcpy(n->name, row->f[0], row->len[0]);
    n->cpu_milli = cpu * 1000;
    n->mem_mib = (uint64_t)(mem * 1024 + 0.5);
    n->num_gpus = (uint32_t)gpus;
    n->gpu_type = t;
    return SIM_OK;
}

/* Whether a first row is a headerless PAI machine row. */
static bool looks_like_pai_row(const csvin_row *row)
{
    double x;
    return row->n == 5 && csvin_parse_double(row->f[2], row->len[2], &x) &&
           csvin_parse_double(row->f[3], row->len[3], &x) &&
           csvin_parse_double(row->f[4], row->len[4], &x);
}

static int load_csv(builder *b, const char *path, const sim_intern *types, uint16_t dflt,
                    sim_diag *d)
{
    static const char *const names[] = {"sn",    "cpu_milli",   "memory_mib", "gpu",
                                        "model", "gpu_mem_mib", "net_gbps",   "count"};
    static const char *const alt[] = {"name", "cpu_milli", "mem_mib", "num_gpus",
                                      "gpu_type", "gpu_mem_mib", "net_gbps", "count"};
    static const char expected[] = "sn,cpu_milli,memory_mib,gpu,model "
                                   "(optional: gpu_mem_mib,net_gbps,count)";
    csvin *in;
    int st = csvin_open(&in, path, ',', d);
    if (st != SIM_OK)
        return st;
    csvin_row row;
    int32_t ix[K_N], ix2[K_N];
    st = csvin_next(in, &row, d);
    if (st == 0)
        st = sim_diag_set(d, SIM_EPARSE, path, 1, 0, "empty file: expected the header %s",
                          expected);
    if (st < 0)
        goto out;
    {
        static const char *const sw[5] = {"num_switch", "num_node_p_switch", "num_gpu_p_node",
                                          "num_cpu_p_node", "mem_p_node"};
        static const char *const pai[5] = {"machine", "gpu_type", "cap_cpu", "cap_mem",
                                           "cap_gpu"};
        int32_t six[5], pix[5];
        if ((st = csvin_map_header(in, &row, sw, 5, six, NULL, d)) != SIM_OK ||
            (st = csvin_map_header(in, &row, pai, 5, pix, NULL, d)) != SIM_OK)
            goto out;
        if (six[0] >= 0) {
            for (int k = 0; k < 5; k++)
                if (six[k] < 0) {
                    st = sim_diag_set(d, SIM_EPARSE, path, row.line, 0,
                                      "header lacks column '%s'; expected num_switch,"
                                      "num_node_p_switch,num_gpu_p_node,num_cpu_p_node,"
                                      "mem_p_node",
                                      sw[k]);
                    goto out;
                }
            b->dup_hint = "; each row of a switch spec names its nodes from s0-n000, so "
                          "nodes of several shapes need a node-list file";
            st = load_switch_spec(b, in, six, dflt, row.n, d);
            goto out_empty;
        }
        bool pai_header = pix[0] == 0 && pix[1] == 1 && pix[2] == 2 && pix[3] == 3 && pix[4] == 4;
        if (pai_header || looks_like_pai_row(&row)) {
            if (!pai_header && (st = pai_machine(b, in, &row, types, d)) != SIM_OK)
                goto out;
            while ((st = csvin_next(in, &row, d)) == 1)
                if ((st = pai_machine(b, in, &row, types, d)) != SIM_OK)
                    goto out;
            goto out_empty;
        }
    }
    bool *unknown = sim_calloc(CSVIN_MAX_FIELDS, sizeof *unknown);
    bool *unknown2 = sim_calloc(CSVIN_MAX_FIELDS, sizeof *unknown2);
    if (!unknown || !unknown2)
        st = sim_diag_set(d, SIM_ENOMEM, path, 0, 0, "out of memory");
    else if ((st = csvin_map_header(in, &row, names, K_N, ix, unknown, d)) == SIM_OK &&
             (st = csvin_map_header(in, &row, alt, K_N, ix2, unknown2, d)) == SIM_OK) {
        /* A column no name matches is most likely a misspelt optional one: say so. */
        size_t o = 0;
        for (uint32_t c = 0; c < row.n && c < CSVIN_MAX_FIELDS && b->ignored; c++)
            if (unknown[c] && unknown2[c] && o + row.len[c] + 3 < b->ignored_size)
                o += (size_t)snprintf(b->ignored + o, b->ignored_size - o, "%s%.*s", o ? ", " : "",
                                      (int)row.len[c], row.f[c]);
    }
    sim_free(unknown);
    sim_free(unknown2);
    if (st != SIM_OK)
        goto out;
    for (int k = 0; k < K_N; k++) {
        /* Two names of one column (sn and name): one of them is a mistake. */
        if (ix[k] >= 0 && ix2[k] >= 0 && ix[k] != ix2[k]) {
            int32_t first = ix[k] < ix2[k] ? ix[k] : ix2[k];
            int32_t second = ix[k] < ix2[k] ? ix2[k] : ix[k];
            st = sim_diag_set(d, SIM_EPARSE, path, row.line, (int)second + 1,
                              "column '%.*s' is another name of column '%.*s' (column %d): "
                              "give one of them",
                              (int)row.len[second], row.f[second], (int)row.len[first],
                              row.f[first], (int)first + 1);
            goto out;
        }
        if (ix[k] < 0)
            ix[k] = ix2[k];
    }
    for (int k = K_SN; k <= K_MODEL; k++) {
        if (ix[k] < 0) {
            st = sim_diag_set(d, SIM_EPARSE, path, row.line, 0,
                              "header lacks column '%s'; expected %s", names[k], expected);
            goto out;
        }
    }
    uint32_t n_header = row.n;
    b->name_col = ix[K_SN];
    while ((st = csvin_next(in, &row, d)) == 1) {
        if ((st = csvin_row_width(in, &row, n_header, d)))
            goto out;
        node_spec proto;
        memset(&proto, 0, sizeof proto);
        uint64_t u, count = 1;
        if (csvin_empty(&row, ix[K_SN]) || row.len[ix[K_SN]] >= SIM_ID_MAX - 12) {
            st = csvin_field_error(in, &row, ix[K_SN], "sn", "a node name of 1..50 bytes", d);
            goto out;
        }
        memcpy(proto.name, row.f[ix[K_SN]], row.len[ix[K_SN]]);
        if ((st = csvin_u64(in, &row, ix[K_CPU], "cpu_milli", 0, UINT64_C(1) << 40,
                            &proto.cpu_milli, d)) ||
            (st = csvin_u64(in, &row, ix[K_MEM], "memory_mib", 0, UINT64_C(1) << 40,
                            &proto.mem_mib, d)) ||
            (st = csvin_u64(in, &row, ix[K_GPU], "gpu", 0, 1024, &u, d)))
            goto out;
        proto.num_gpus = (uint32_t)u;
        const char *m = (uint32_t)ix[K_MODEL] < row.n ? row.f[ix[K_MODEL]] : "";
        size_t mlen = (uint32_t)ix[K_MODEL] < row.n ? row.len[ix[K_MODEL]] : 0;
        bool none = mlen == 0 || (mlen == 3 && strncmp(m, "nan", 3) == 0);
        if (proto.num_gpus && (none || resolve_type(types, m, mlen, &proto.gpu_type))) {
            st = known_type_error(in, &row, ix[K_MODEL], "model", types, NULL, d);
            goto out;
        }
        /* A GPU-less node's model is not used, but one that names no GPU is a mistake. */
        uint16_t unused;
        if (!proto.num_gpus && !none && resolve_type(types, m, mlen, &unused)) {
            st = known_type_error(in, &row, ix[K_MODEL], "model", types, "empty or nan", d);
            goto out;
        }
        if ((!csvin_empty(&row, ix[K_GPUMEM]) &&
             (st = csvin_u64(in, &row, ix[K_GPUMEM], "gpu_mem_mib", 1, UINT64_C(1) << 40,
                             &proto.gpu_mem_mib, d))) ||
            (!csvin_empty(&row, ix[K_NET]) &&
             (st = csvin_double(in, &row, ix[K_NET], "net_gbps", 0, 1e6, &proto.net_gbps, d))) ||
            (!csvin_empty(&row, ix[K_COUNT]) &&
             (st = csvin_u64(in, &row, ix[K_COUNT], "count", 1, MAX_NODES, &count, d))))
            goto out;
        if (b->c->n_nodes + count > MAX_NODES) {
            st = sim_diag_set(d, SIM_ELIMIT, path, row.line, 0, "more than %u nodes", MAX_NODES);
            goto out;
        }
        for (uint64_t k = 0; k < count; k++) {
            node_spec *n = add_node(b, row.line);
            if (!n) {
                st = sim_diag_set(d, SIM_ENOMEM, path, row.line, 0, "out of memory");
                goto out;
            }
            *n = proto;
            if (count > 1) {
                /* The name was checked to leave room for the suffix. */
                size_t len = strlen(proto.name);
                snprintf(n->name + len, sizeof n->name - len, "-%llu", (unsigned long long)k);
            }
        }
    }
out_empty:
    if (st == 0 && b->c->n_nodes == 0)
        st = sim_diag_set(d, SIM_EPARSE, path, 0, 0, "the cluster file lists no node");
    if (st == 0)
        st = check_unique_names(b, path, d);
out:
    csvin_close(in);
    return st < 0 ? st : SIM_OK;
}

static int compact_error(const char *src, const char *group, const char *what, sim_diag *d)
{
    return sim_diag_set(d, SIM_EPARSE, NULL, 0, 0,
                        "--cluster '%s': group '%s': %s (expected a cluster file, or groups "
                        "like 4xV100M32:8,16xT4:2[:cpu=MILLI][:mem=MIB][:gpumem=MIB])",
                        src, group, what);
}

static int load_compact(builder *b, const char *src, const sim_intern *types, sim_diag *d)
{
    char buf[1024];
    if (strlen(src) >= sizeof buf)
        return sim_diag_set(d, SIM_EPARSE, NULL, 0, 0, "--cluster string is too long");
    snprintf(buf, sizeof buf, "%s", src);
    size_t n_buf = strlen(buf);
    if (n_buf == 0 || buf[0] == ',' || buf[n_buf - 1] == ',' || strstr(buf, ",,"))
        return sim_diag_set(d, SIM_EPARSE, NULL, 0, 0,
                            "--cluster '%s': an empty group (expected a cluster file, or groups "
                            "like 4xV100M32:8,16xT4:2 separated by single commas)", src);
    char *save = NULL;
    for (char *g = strtok_r(buf, ",", &save); g; g = strtok_r(NULL, ",", &save)) {
        char group[128];
        snprintf(group, sizeof group, "%s", g);
        char *x = strchr(g, 'x');
        if (!x)
            return compact_error(src, group, "no 'x' between node count and GPU type", d);
        uint64_t count, gpus;
        if (!csvin_parse_u64(g, (size_t)(x - g), &count) || count < 1 || count > MAX_NODES)
            return compact_error(src, group, "the node count is not an integer 1..4194304", d);
        char *type = x + 1;
        char *colon = strchr(type, ':');
        if (!colon)
            return compact_error(src, group, "no ':GPUS' after the GPU type", d);
        uint16_t t;
        if (resolve_type(types, type, (size_t)(colon - type), &t) != SIM_OK) {
            char known[600], what[700];
            sim_intern_list(types, ", ", known, sizeof known);
            snprintf(what, sizeof what, "unknown GPU type (known: %s)", known);
            return compact_error(src, group, what, d);
        }
        char *rest = colon + 1;
        char *next = strchr(rest, ':');
        if (!csvin_parse_u64(rest, next ? (size_t)(next - rest) : strlen(rest), &gpus) ||
            gpus > 1024)
            return compact_error(src, group, "GPUs per node is not an integer 0..1024", d);
        uint64_t cpu = UNLIMITED, mem = UNLIMITED, gmem = 0;
        static const char *const keys[3] = {"cpu", "mem", "gpumem"};
        uint64_t *vals[3] = {&cpu, &mem, &gmem};
        bool seen[3] = {false, false, false};
        while (next) {
            char *kv = next + 1;
            next = strchr(kv, ':');
            size_t len = next ? (size_t)(next - kv) : strlen(kv);
            char *eq = memchr(kv, '=', len);
            uint64_t val;
            if (!eq || !csvin_parse_u64(eq + 1, len - (size_t)(eq + 1 - kv), &val))
                return compact_error(src, group, "an option is not key=integer", d);
            size_t klen = (size_t)(eq - kv), k = 0;
            while (k < 3 && (strlen(keys[k]) != klen || strncmp(kv, keys[k], klen) != 0))
                k++;
            if (k == 3)
                return compact_error(src, group, "unknown option (cpu, mem, gpumem)", d);
            /* As the CSV column gpu_mem_mib: the catalog's figure is had by leaving it out. */
            if (k == 2 && (val < 1 || val > UINT64_C(1) << 40))
                return compact_error(src, group,
                                     "gpumem is not an integer 1..1099511627776 (MiB; leave it "
                                     "out for the catalog's figure)",
                                     d);
            /* A second value would silently replace the first: one of them is a mistake. */
            if (seen[k])
                return sim_diag_set(d, SIM_EPARSE, NULL, 0, 0,
                                    "--cluster '%s': group '%s': option %s is given twice "
                                    "(%llu, then %llu): give it once",
                                    src, group, keys[k], (unsigned long long)*vals[k],
                                    (unsigned long long)val);
            seen[k] = true;
            *vals[k] = val;
        }
        if (b->c->n_nodes + count > MAX_NODES)
            return sim_diag_set(d, SIM_ELIMIT, NULL, 0, 0, "more than %u nodes", MAX_NODES);
        for (uint64_t k = 0; k < count; k++) {
            node_spec *n = add_node(b, 0);
            if (!n)
                return sim_diag_set(d, SIM_ENOMEM, NULL, 0, 0, "out of memory");
            snprintf(n->name, sizeof n->name, "node-%04u", b->c->n_nodes - 1);
            n->cpu_milli = cpu;
            n->mem_mib = mem;
            n->num_gpus = (uint32_t)gpus;
            n->gpu_type = gpus ? t : SIM_GPU_TYPE_NONE;
            n->gpu_mem_mib = gmem;
        }
    }
    if (b->c->n_nodes == 0)
        return sim_diag_set(d, SIM_EPARSE, NULL, 0, 0, "--cluster '%s' describes no node", src);
    return SIM_OK;
}

int cluster_spec_load(cluster_spec **out, const char *src, const sim_intern *gpu_types,
                      sim_diag *d)
{
    return cluster_spec_load_typed(out, src, gpu_types, NULL, d);
}

int cluster_spec_load_typed(cluster_spec **out, const char *src, const sim_intern *gpu_types,
                            const char *default_gpu_type, sim_diag *d)
{
    return cluster_spec_load_ignoring(out, src, gpu_types, default_gpu_type, NULL, 0, d);
}

int cluster_spec_load_ignoring(cluster_spec **out, const char *src, const sim_intern *gpu_types,
                               const char *default_gpu_type, char *ignored, size_t size,
                               sim_diag *d)
{
    *out = NULL;
    if (ignored && size)
        ignored[0] = '\0';
    const char *dname = default_gpu_type ? default_gpu_type : "V100M16";
    uint16_t dflt;
    if (resolve_type(gpu_types, dname, strlen(dname), &dflt) != SIM_OK) {
        char known[600];
        sim_intern_list(gpu_types, ", ", known, sizeof known);
        return sim_diag_set(d, SIM_EINVAL, NULL, 0, 0, "unknown GPU type '%s' (known: %s)", dname,
                            known);
    }
    builder b = {
        .name_col = -1, .dup_hint = "", .ignored = size ? ignored : NULL, .ignored_size = size};
    b.c = sim_calloc(1, sizeof *b.c);
    if (!b.c)
        return sim_diag_set(d, SIM_ENOMEM, src, 0, 0, "out of memory");
    struct stat sb;
    int st;
    bool is_file = stat(src, &sb) == 0 || strcmp(src, "-") == 0;
    bool looks_like_path = strchr(src, '/') || strstr(src, ".csv");
    if (is_file)
        st = load_csv(&b, src, gpu_types, dflt, d);
    else if (looks_like_path)
        st = sim_diag_set(d, SIM_EIO, src, 0, 0, "cannot open: No such file or directory");
    else
        st = load_compact(&b, src, gpu_types, d);
    sim_free(b.lines);
    if (st != SIM_OK) {
        cluster_spec_destroy(b.c);
        return st;
    }
    *out = b.c;
    return SIM_OK;
}
