# ASYNC_WRITE that also waits for the write-out already in flight (SYNC_FILE_RANGE_WAIT_BEFORE),
# which "pages already under writeback are not waited for" rules out.
# file: mm/fadvise.c
# marker: SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE); /* plant */
/advice == LINUX_FADV_ASYNC_WRITE)$/{n;s/SYNC_FILE_RANGE_WRITE);$/SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE); \/* plant *\//}
