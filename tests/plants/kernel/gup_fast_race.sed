# 0002's check as it first was, the switch read once before the loop, with the gate (gup_gate.sed)
# after that read, and the fix (the switch read per page, after the flag) taken out: red.
# file: mm/gup.c
# marker: plant_gate(pages, npages); /* plant */
# gone: !exclusive && !pinned_pages_may_be_shared(),
# after: gup_gate
s/^\tfor (; npages; npages--, pages++) {$/\tif (pinned_pages_may_be_shared())\n\t\treturn;\n\tplant_gate(pages, npages); \/* plant *\/\n&/
/VM_WARN_ON_ONCE_PAGE(!exclusive && !pinned_pages_may_be_shared(),$/{N;s/.*/\t\tVM_WARN_ON_ONCE_PAGE(!exclusive, page);/}
