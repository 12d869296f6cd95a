# pindma_edu_copy() copies with the CPU instead of programming edu, and counts two edu transfers
# all the same: only evidence the driver does not write can tell. The block serves whatever
# PLANT_CPU_SERVES lets it and raises edu's interrupt by hand PLANT_IRQS_RAISED times (here: every
# transfer, none); edu_cpu_read.sed, applied after this one, changes only those two.
/^int pindma_edu_copy(/,/^}/{
/^\tif (dir == DMA_FROM_DEVICE) {$/i\
\tif (PLANT_CPU_SERVES) { /* plant: the CPU copies */\
\t\tvoid *v = kmap_local_page(page);\
\t\tint i;\
\
\t\tif (dir == DMA_FROM_DEVICE)\
\t\t\tmemcpy(v + off, buf, len);\
\t\telse\
\t\t\tmemcpy(buf, v + off, len);\
\t\tkunmap_local(v);\
\t\tfor (i = 0; i < PLANT_IRQS_RAISED; i++) {\
\t\t\treinit_completion(&edu->done);\
\t\t\twritel(EDU_IRQ_DMA, edu->regs + 0x60); /* edu's raise register */\
\t\t\tif (!wait_for_completion_timeout(&edu->done, EDU_TIMEOUT)) {\
\t\t\t\tret = -ETIMEDOUT;\
\t\t\t\tgoto unlock;\
\t\t\t}\
\t\t}\
\t\tatomic64_add(2, &pindma_nr_edu_xfers);\
\t\tif (xfers)\
\t\t\tatomic64_add(2, xfers);\
\t\tret = 0;\
\t\tgoto unlock;\
\t}
}
s/^#include <linux\/dma-mapping.h>$/&\
#include <linux\/highmem.h>\
#define PLANT_CPU_SERVES 1\
#define PLANT_IRQS_RAISED 0/
