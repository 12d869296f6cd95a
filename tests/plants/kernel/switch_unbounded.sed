# 0002's switch taking a value past 1 (no upper bound).
# file: mm/gup.c
# marker: /* plant: no upper bound */
/\.procname	= "fork_share_pinned",/,/^}/{s/^\t\t\.extra2		= SYSCTL_ONE,$/\t\t\/* plant: no upper bound *\//}
