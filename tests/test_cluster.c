/*
 * test_cluster.c: cluster specs from node-list CSVs (the openb list, aliases, counts,
 * CPU-only nodes) and compact strings, and their errors.
 */
#include "models/catalog.h"
#include "base/alloc.h"
#include "traces/cluster.h"

#include "check.h"

static model_catalog *cat;

static int load(const char *src, cluster_spec **c, char *msg, size_t size)
{
    sim_diag d = {0};
    int st = cluster_spec_load(c, src, model_catalog_names(cat), &d);
    if (st != SIM_OK)
        sim_diag_format(&d, msg, size);
    return st;
}

int main(void)
{
    sim_diag d;
    char path[1024], msg[2048];
    snprintf(path, sizeof path, "%s/models/data/gpus.csv", SIM_SOURCE_DIR);
    if (model_catalog_load(&cat, path, &d) != SIM_OK)
        return 1;
    const sim_intern *names = model_catalog_names(cat);
    cluster_spec *c = NULL;

    CHECK(load("2xV100M32:8:cpu=96000:mem=786432,3xt4:2", &c, msg, sizeof msg) == SIM_OK);
    CHECK_EQ_I64(c->n_nodes, 5);
    CHECK_EQ_I64(cluster_spec_gpus(c), 22);
    CHECK_STR(c->nodes[0].name, "node-0000");
    CHECK_STR(c->nodes[4].name, "node-0004");
    CHECK_EQ_I64(c->nodes[1].cpu_milli, 96000);
    CHECK_STR(sim_intern_name(names, c->nodes[3].gpu_type), "T4");
    CHECK(c->nodes[3].cpu_milli > (UINT64_C(1) << 40)); /* unlimited unless given */
    cluster_spec_destroy(c);
    CHECK(load("2xT4:2:gpumem=20000", &c, msg, sizeof msg) == SIM_OK);
    CHECK_EQ_I64(c->nodes[1].gpu_mem_mib, 20000);
    cluster_spec_destroy(c);

    check_put("cluster_ok.csv", "sn,cpu_milli,memory_mib,gpu,model,count\n"
                                "cpu-a,32000,65536,0,nan,\n"
                                "g,96000,393216,8,v100,3\n");
    CHECK(load("cluster_ok.csv", &c, msg, sizeof msg) == SIM_OK);
    CHECK_EQ_I64(c->n_nodes, 4);
    CHECK_EQ_I64(c->nodes[0].num_gpus, 0);
    CHECK_STR(c->nodes[3].name, "g-2");
    CHECK_STR(sim_intern_name(names, c->nodes[2].gpu_type), "V100M16");
    cluster_spec_destroy(c);

    struct {
        const char *src, *want;
    } bad[] = {
        {"4xH9000:8", "error: --cluster '4xH9000:8': group '4xH9000:8': unknown GPU type (known: "},
        {"4V100M32:8", "error: --cluster '4V100M32:8': group '4V100M32:8': no 'x' between node "
                       "count and GPU type"},
        {"0xT4:2", "error: --cluster '0xT4:2': group '0xT4:2': the node count is not an integer "
                   "1..4194304"},
        {"2xT4:2:disk=5", "error: --cluster '2xT4:2:disk=5': group '2xT4:2:disk=5': unknown "
                          "option (cpu, mem, gpumem)"},
        {"missing/cluster.csv", "missing/cluster.csv: error: cannot open: No such file or "
                                "directory"},
        {"1xT4:2:gpumem=0", "error: --cluster '1xT4:2:gpumem=0': group '1xT4:2:gpumem=0': "
                            "gpumem is not an integer 1..1099511627776 (MiB; leave it out for "
                            "the catalog's figure)"},
        {"1xT4:1,", "error: --cluster '1xT4:1,': an empty group (expected a cluster file, or "
                    "groups like 4xV100M32:8,16xT4:2 separated by single commas)"},
        {"1xT4:1,,2xT4:1", "error: --cluster '1xT4:1,,2xT4:1': an empty group"},
        {"1xT4:4:cpu=1000:cpu=4000", "error: --cluster '1xT4:4:cpu=1000:cpu=4000': group "
                                     "'1xT4:4:cpu=1000:cpu=4000': option cpu is given twice "
                                     "(1000, then 4000): give it once"},
        {"2xT4:2,1xT4:1:mem=8:gpumem=4:mem=8", "error: --cluster "
                                               "'2xT4:2,1xT4:1:mem=8:gpumem=4:mem=8': group "
                                               "'1xT4:1:mem=8:gpumem=4:mem=8': option mem is "
                                               "given twice (8, then 8): give it once"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        c = NULL;
        CHECK(load(bad[i].src, &c, msg, sizeof msg) != SIM_OK);
        CHECK(c == NULL);
        if (strncmp(msg, bad[i].want, strlen(bad[i].want)) != 0) {
            check_failed++;
            fprintf(stderr, "cluster '%s':\n  got:      %s\n  expected: %s\n", bad[i].src, msg,
                    bad[i].want);
        }
    }
    check_put("cluster_bad.csv", "sn,cpu_milli,memory_mib,gpu,model\nn1,1000,1000,2,Z80\n");
    CHECK(load("cluster_bad.csv", &c, msg, sizeof msg) == SIM_EPARSE);
    CHECK(strncmp(msg, "cluster_bad.csv:2:5: error: field 'model': expected a known GPU type "
                       "(K80, P100,", 73) == 0);
    check_put("cluster_bad2.csv", "sn,cpu_milli,gpu,model\nn1,1000,2,T4\n");
    CHECK(load("cluster_bad2.csv", &c, msg, sizeof msg) == SIM_EPARSE);
    CHECK_STR(msg, "cluster_bad2.csv:1: error: header lacks column 'memory_mib'; expected "
                   "sn,cpu_milli,memory_mib,gpu,model (optional: gpu_mem_mib,net_gbps,count)");
    check_put("cluster_bad3.csv", "sn,cpu_milli,memory_mib,gpu,model\nn1,-4,1000,2,T4\n");
    CHECK(load("cluster_bad3.csv", &c, msg, sizeof msg) == SIM_EPARSE);
    CHECK_STR(msg, "cluster_bad3.csv:2:2: error: field 'cpu_milli': expected an integer "
                   "0..1099511627776, got \"-4\"");
    check_put("cluster_wide.csv", "sn,cpu_milli,memory_mib,gpu,model\n"
                                  "n1,1000,1000,1,T4,extra,more\n");
    CHECK(load("cluster_wide.csv", &c, msg, sizeof msg) == SIM_EPARSE);
    CHECK_STR(msg, "cluster_wide.csv:2:6: error: expected 5 fields, as in the header, got 7");
    check_put("cluster_dup.csv", "sn,cpu_milli,memory_mib,gpu,model,count\n"
                                 "a,1000,1000,1,T4,\nb,1000,1000,1,T4,2\na,1000,1000,2,T4,\n");
    CHECK(load("cluster_dup.csv", &c, msg, sizeof msg) == SIM_EPARSE);
    CHECK_STR(msg, "cluster_dup.csv:4:1: error: node name 'a' is given twice (first on line 2)");
    check_put("cluster_dup2.csv", "sn,cpu_milli,memory_mib,gpu,model,count\n"
                                  "b,1000,1000,1,T4,2\nb-1,1000,1000,2,T4,\n");
    CHECK(load("cluster_dup2.csv", &c, msg, sizeof msg) == SIM_EPARSE);
    CHECK_STR(msg, "cluster_dup2.csv:3:1: error: node name 'b-1' is given twice (first on line "
                   "2)");
    check_put("cluster_dup3.csv", "m1,V100M16,96,512,8\nm2,T4,96,512,2\nm1,T4,96,512,2\n");
    CHECK(load("cluster_dup3.csv", &c, msg, sizeof msg) == SIM_EPARSE);
    CHECK_STR(msg, "cluster_dup3.csv:3:1: error: node name 'm1' is given twice (first on line 1)");

    /* Columns that are none of the format's (misspelt optional ones) are reported for a
     * warning; two names of one column are an error. */
    char ignored[64];
    check_put("cluster_typo.csv", "sn,cpu_milli,memory_mib,gpu,model,gpumem_mib,cnt\n"
                                  "n1,8000,16000,2,T4,100,5\n");
    CHECK(cluster_spec_load_ignoring(&c, "cluster_typo.csv", names, NULL, ignored, sizeof ignored,
                                     &d) == SIM_OK);
    CHECK_STR(ignored, "gpumem_mib, cnt");
    CHECK_EQ_I64(c->n_nodes, 1);
    cluster_spec_destroy(c);
    CHECK(cluster_spec_load_ignoring(&c, "cluster_ok.csv", names, NULL, ignored, sizeof ignored,
                                     &d) == SIM_OK);
    CHECK_STR(ignored, "");
    cluster_spec_destroy(c);
    check_put("cluster_alias2.csv", "sn,name,cpu_milli,memory_mib,gpu,model\n"
                                    "n1,n2,8000,16000,2,T4\n");
    CHECK(load("cluster_alias2.csv", &c, msg, sizeof msg) == SIM_EPARSE);
    CHECK_STR(msg, "cluster_alias2.csv:1:2: error: column 'name' is another name of column 'sn' "
                   "(column 1): give one of them");
    check_put("cluster_alias3.csv", "gpu_type,sn,cpu_milli,mem_mib,gpu,model\n"
                                    "T4,n1,8000,16000,2,T4\n");
    CHECK(load("cluster_alias3.csv", &c, msg, sizeof msg) == SIM_EPARSE);
    CHECK_STR(msg, "cluster_alias3.csv:1:6: error: column 'model' is another name of column "
                   "'gpu_type' (column 1): give one of them");

    /* Names given twice in a switch spec cite the rows that gave them. */
    check_put("cluster_sw2.csv", "num_switch,num_node_p_switch,num_gpu_p_node,num_cpu_p_node,"
                                 "mem_p_node\n1,2,8,64,256\n1,2,4,32,128");
    CHECK(load("cluster_sw2.csv", &c, msg, sizeof msg) == SIM_EPARSE);
    CHECK_STR(msg, "cluster_sw2.csv:3: error: node name 's0-n000' is given twice (first on line "
                   "2); each row of a switch spec names its nodes from s0-n000, so nodes of "
                   "several shapes need a node-list file");

    /* A GPU-less node may name a known type (not used) or none, but not an unknown one. */
    check_put("cluster_zero.csv", "sn,cpu_milli,memory_mib,gpu,model\n"
                                  "n1,8000,16000,0,T4\nn2,8000,16000,0,\n");
    CHECK(load("cluster_zero.csv", &c, msg, sizeof msg) == SIM_OK);
    CHECK_EQ_I64(c->nodes[0].gpu_type, SIM_GPU_TYPE_NONE);
    cluster_spec_destroy(c);
    check_put("cluster_zeroT.csv", "sn,cpu_milli,memory_mib,gpu,model\nn1,8000,16000,0,FOOBAR\n");
    CHECK(load("cluster_zeroT.csv", &c, msg, sizeof msg) == SIM_EPARSE);
    CHECK(strncmp(msg,
                  "cluster_zeroT.csv:2:5: error: field 'model': expected empty or nan (the "
                  "node has no GPU), or a known GPU type (K80,",
                  110) == 0);
    CHECK(strstr(msg, "got \"FOOBAR\"") != NULL);
    check_put("cluster_pai0.csv", "m0,T4,96,512,0\nm1,FOO,96,512,0\nm2,T4,96,512,2\n");
    CHECK(load("cluster_pai0.csv", &c, msg, sizeof msg) == SIM_EPARSE);
    CHECK(strncmp(msg,
                  "cluster_pai0.csv:2:2: error: field 'gpu_type': expected CPU or empty "
                  "(the node has no GPU), or a known GPU type (K80,",
                  114) == 0);
    CHECK(strstr(msg, "got \"FOO\"") != NULL);

    char openb[1024];
    if (check_shared("alibaba_gpu_v2023/openb_node_list_gpu_node.csv", openb, sizeof openb)) {
        CHECK(load(openb, &c, msg, sizeof msg) == SIM_OK);
        CHECK_EQ_I64(c->n_nodes, 1213);
        CHECK_EQ_I64(cluster_spec_gpus(c), 6212);
        cluster_spec_destroy(c);
    }
    if (check_shared("alibaba_gpu_v2023/openb_node_list_all_node.csv", openb, sizeof openb)) {
        CHECK(load(openb, &c, msg, sizeof msg) == SIM_OK);
        CHECK_EQ_I64(c->n_nodes, 1523);
        CHECK_EQ_I64(cluster_spec_gpus(c), 6212);
        cluster_spec_destroy(c);
    }
    /* Every allocation failure while loading a catalog or a cluster is SIM_ENOMEM and
     * leaks nothing. */
    int64_t base = sim_alloc_live();
    int failed = 0;
    for (uint64_t k = 1; k < 80; k++) {
        sim_alloc_fail_after(k);
        model_catalog *c2 = NULL;
        cluster_spec *cs = NULL;
        int st1 = model_catalog_load(&c2, path, &d);
        int st2 = cluster_spec_load(&cs, "cluster_ok.csv", names, &d);
        int st3 = SIM_OK;
        cluster_spec *cs2 = NULL;
        st3 = cluster_spec_load(&cs2, "300xV100M32:8,2xT4:2", names, &d);
        sim_alloc_fail_after(0);
        CHECK(st1 == SIM_OK || st1 == SIM_ENOMEM);
        CHECK(st2 == SIM_OK || st2 == SIM_ENOMEM);
        CHECK(st3 == SIM_OK || st3 == SIM_ENOMEM);
        failed += st1 != SIM_OK || st2 != SIM_OK || st3 != SIM_OK;
        model_catalog_destroy(c2);
        cluster_spec_destroy(cs);
        cluster_spec_destroy(cs2);
        CHECK_EQ_I64(sim_alloc_live(), base);
    }
    CHECK(failed > 10);
    model_catalog_destroy(cat);
    return check_done();
}
