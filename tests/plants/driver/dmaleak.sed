# A DMA request frees its bounce buffer no more: a page of kernel memory leaked per request.
/^long pindma_dma(/,/^}/s/^\tkfree(buf);$/\t\/* plant: the bounce buffer leaked *\//
