# A device read served by the CPU: pindma_edu_copy() copies the page itself and raises edu's
# interrupt by hand (its raise register, BAR0 + 0x60) once for each of the two transfers, and
# counts them: the kernel's count of edu's interrupts is right, edu's DMA registers are not.
/^int pindma_edu_copy(/,/^}/{
/^\tif (dir == DMA_FROM_DEVICE) {$/i\
\tif (dir == DMA_TO_DEVICE) { /* plant: the CPU reads, edu's interrupt raised by hand */\
\t\tvoid *v = kmap_local_page(page);\
\t\tint i;\
\
\t\tmemcpy(buf, v + off, len);\
\t\tkunmap_local(v);\
\t\tfor (i = 0; i < 2; i++) {\
\t\t\treinit_completion(&edu->done);\
\t\t\twritel(EDU_IRQ_DMA, edu->regs + 0x60);\
\t\t\twait_for_completion_timeout(&edu->done, EDU_TIMEOUT);\
\t\t}\
\t\tatomic64_add(2, &pindma_nr_edu_xfers);\
\t\tif (xfers)\
\t\t\tatomic64_add(2, xfers);\
\t\tret = 0;\
\t\tgoto unlock;\
\t}
}
s/^#include <linux\/dma-mapping.h>$/&\
#include <linux\/highmem.h>/
