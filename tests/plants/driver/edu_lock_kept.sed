# The refusal of a page edu cannot reach (ENXIO) returns with the edu lock still held: the next
# copy waits for it for ever, killably, a wait the hung-task detector skips.
/^int pindma_edu_copy(/,/^}/{
/^\t\tret = -ENXIO;$/{n;s/^\t\tgoto unlock;$/\t\treturn ret; \/* plant: edu lock kept *\//}
}
