# 0002's switch never turning fork's sharing on.
# file: mm/gup.c
# marker: return false; /* plant: never on */
s/^\treturn static_branch_unlikely(&fork_share_pinned_on);$/\treturn false; \/* plant: never on *\//
