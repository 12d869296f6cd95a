# On top of dma_unref.sed (the DMA holding no reference to its handle): a .flush that tears the
# file's handles down at close(), as drivers that mistake flush for release do. Every close()
# calls it, the last reference to the file or not, so closing under a DMA in flight unpins the
# pages under it; release then finds the list empty.
/^static int pindma_release(struct inode \*inode, struct file \*file)$/i\
/* plant: the handles torn down at close() */\
static int pindma_plant_flush(struct file *file, fl_owner_t id)\
{\
\tstruct pindma_file *pf = file->private_data;\
\tstruct pindma_handle *h, *tmp;\
\
\tlist_for_each_entry(h, &pf->handles, node)\
\t\txa_erase(&pindma_handles, h->id);\
\tlist_for_each_entry_safe(h, tmp, &pf->handles, node)\
\t\tpindma_handle_put(h);\
\tINIT_LIST_HEAD(&pf->handles);\
\treturn 0;\
}\

s/^\t\.release = pindma_release,$/&\n\t.flush = pindma_plant_flush,/
