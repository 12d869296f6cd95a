# The same gate (gup_gate.sed) at the same point of 0002 as it is: green, the gate saying it let a
# fork() in.
# file: mm/gup.c
# marker: plant_gate(pages, npages); /* plant */
# after: gup_gate
s/^\tfor (; npages; npages--, pages++) {$/\tplant_gate(pages, npages); \/* plant *\/\n&/
