/* A qemu TCG plugin (plugin API version 1, qemu 7.2): the guest instructions executed, per
 * 4 KiB page of guest code, written at exit to the file named by its argument out=FILE as
 * "page count" lines (hexadecimal page number, decimal count). benchmarks/instructions_aarch64.sh
 * builds it and sums the pages of the compiled module. The plugin API's declarations are
 * written here (qemu-plugin.h is not packaged): the few this plugin calls, as qemu 7.2
 * defines them. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_CB_R_REGS, QEMU_PLUGIN_CB_RW_REGS };
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index, void *userdata);
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
    void (*cb)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb));
void qemu_plugin_register_vcpu_tb_exec_cb(struct qemu_plugin_tb *tb, qemu_plugin_vcpu_udata_cb_t cb,
    enum qemu_plugin_cb_flags flags, void *userdata);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb, void *userdata);
__attribute__((visibility("default"))) int qemu_plugin_version = 1;

typedef struct { uint64_t page, insns, count; } Block;
static char out_path[4096];

static void exec(unsigned int vcpu, void *udata)
{
    (void)vcpu;
    Block *b = (Block *)udata;
    __atomic_fetch_add(&b->count, b->insns, __ATOMIC_RELAXED);
}

#define MAX_BLOCKS (1 << 22)
static Block *blocks;
static uint64_t n_blocks;

static void trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    (void)id;
    uint64_t i = __atomic_fetch_add(&n_blocks, 1, __ATOMIC_RELAXED);
    if (i >= MAX_BLOCKS)
        return;
    blocks[i].page = qemu_plugin_tb_vaddr(tb) >> 12;
    blocks[i].insns = qemu_plugin_tb_n_insns(tb);
    qemu_plugin_register_vcpu_tb_exec_cb(tb, exec, QEMU_PLUGIN_CB_NO_REGS, &blocks[i]);
}

static int by_page(const void *a, const void *b)
{
    uint64_t x = ((const Block *)a)->page, y = ((const Block *)b)->page;
    return x < y ? -1 : x > y;
}

static void at_exit(qemu_plugin_id_t id, void *p)
{
    (void)id, (void)p;
    uint64_t n = n_blocks < MAX_BLOCKS ? n_blocks : MAX_BLOCKS;
    qsort(blocks, n, sizeof *blocks, by_page);
    FILE *f = fopen(out_path, "w");
    if (!f)
        return;
    for (uint64_t i = 0; i < n;) {
        uint64_t page = blocks[i].page, total = 0;
        for (; i < n && blocks[i].page == page; i++)
            total += blocks[i].count;
        if (total)
            fprintf(f, "%" PRIx64 " %" PRIu64 "\n", page, total);
    }
    fclose(f);
}

__attribute__((visibility("default"))) int qemu_plugin_install(qemu_plugin_id_t id, const void *info,
                                                                int argc, char **argv)
{
    (void)info;
    for (int i = 0; i < argc; i++)
        if (strncmp(argv[i], "out=", 4) == 0)
            snprintf(out_path, sizeof out_path, "%s", argv[i] + 4);
    blocks = calloc(MAX_BLOCKS, sizeof *blocks);
    qemu_plugin_register_vcpu_tb_trans_cb(id, trans);
    qemu_plugin_register_atexit_cb(id, at_exit, NULL);
    return 0;
}
