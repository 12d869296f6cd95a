# One pin in three that it would grant refused, with an errno the ABI allows (ENOMEM: over the
# memlock limit): a count of checks made stays above its floor, a share of pins granted does not.
/^static long pindma_ioctl_pin(/,/^}/{
/^\tif (IS_ERR(h)) {$/i\
\tif (!IS_ERR(h)) { /* plant: one pin in three refused */\
\t\tstatic atomic_t n;\
\
\t\tif (atomic_inc_return(&n) % 3 == 0) {\
\t\t\tpindma_handle_put(h);\
\t\t\th = ERR_PTR(-ENOMEM);\
\t\t}\
\t}
}
