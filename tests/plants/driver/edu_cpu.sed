# pindma_edu_copy() copies with the CPU instead of programming edu, and counts two edu transfers
# all the same: only evidence the driver does not write can tell.
/^int pindma_edu_copy(/,/^}/{
/^\tif (dir == DMA_FROM_DEVICE) {$/i\
\tif (1) { /* plant: the CPU copies, edu counted all the same */\
\t\tvoid *v = kmap_local_page(page);\
\
\t\tif (dir == DMA_FROM_DEVICE)\
\t\t\tmemcpy(v + off, buf, len);\
\t\telse\
\t\t\tmemcpy(buf, v + off, len);\
\t\tkunmap_local(v);\
\t\tatomic64_add(2, &pindma_nr_edu_xfers);\
\t\tif (xfers)\
\t\t\tatomic64_add(2, xfers);\
\t\tret = 0;\
\t\tgoto unlock;\
\t}
}
s/^#include <linux\/dma-mapping.h>$/&\
#include <linux\/highmem.h>/
