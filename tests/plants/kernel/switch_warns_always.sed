# 0002's warning and taint on every enable, not once a boot.
# file: mm/gup.c
# marker: if (true) { /* plant: every time */
s/if (!static_key_enabled(&fork_share_pinned_used)) {$/if (true) { \/* plant: every time *\//
