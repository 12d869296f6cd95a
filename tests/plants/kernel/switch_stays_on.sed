# 0002's switch never turning fork's sharing off again.
# file: mm/gup.c
# marker: ; /* plant: never off */
s/^\t\t\tstatic_branch_disable(&fork_share_pinned_on);$/\t\t\t; \/* plant: never off *\//
