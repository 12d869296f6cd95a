# WRITE_WAIT taking len 0 as an empty range, as 0001 once did: it passed len 0 on as end -1,
# which 6.1's file_fdatawait_range() takes as an empty range (6.12's waits to the end: not planted
# there).
# file: mm/fadvise.c
# marker: offset + len - 1); /* plant */
/advice == LINUX_FADV_WRITE_WAIT)$/{n;N;s/.*/\t\treturn file_fdatawait_range(file, offset, offset + len - 1); \/* plant *\//}
