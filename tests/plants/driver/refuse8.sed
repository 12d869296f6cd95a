# Every pin it would grant refused, with an errno the ABI allows (ENOMEM: over the memlock
# limit), once the file holds 8 handles: the fuzzer's floors must see the checks it skipped.
/^static long pindma_ioctl_pin(/,/^}/{
/^\tif (IS_ERR(h)) {$/i\
\tif (!IS_ERR(h)) { /* plant: every pin refused once the file has 8 handles */\
\t\tstruct pindma_handle *x;\
\t\tint n = 0;\
\
\t\txa_lock(&pindma_handles);\
\t\tlist_for_each_entry(x, &pf->handles, node)\
\t\t\tn++;\
\t\txa_unlock(&pindma_handles);\
\t\tif (n >= 8) {\
\t\t\tpindma_handle_put(h);\
\t\t\th = ERR_PTR(-ENOMEM);\
\t\t}\
\t}
}
