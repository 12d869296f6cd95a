# The DMA ioctl holding no reference to its handle while it works: pindma_handle_put() before the
# DMA rather than after, so that an UNPIN (or the file's release) meanwhile unpins the pages under
# it. The page a one-chunk DMA writes is read from the handle before the DMA waits, so the plant
# touches nothing freed: only the pins' lifetime is wrong.
/^static long pindma_ioctl_dma(/,/^}/{
/^\tret = pindma_dma(h, &req, dir, &pf->edu_xfers);$/i\
\tpindma_handle_put(h); /* plant: the DMA holds no reference */
/^\tpindma_handle_put(h);$/d
}
