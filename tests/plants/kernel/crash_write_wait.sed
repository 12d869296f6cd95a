# WRITE_WAIT and ASYNC_WRITE returning 0 at once: nothing is written before the cut, whatever the
# host's load (with only WRITE_WAIT planted, ASYNC_WRITE's I/O finished before the cut on CI's busy
# host: green).
# file: mm/fadvise.c
# marker: return 0; /* plant */
/advice == LINUX_FADV_ASYNC_WRITE)$/{n;s/.*/\t\treturn 0; \/* plant *\//};/advice == LINUX_FADV_WRITE_WAIT)$/{n;N;s/.*/\t\treturn 0; \/* plant *\//}
