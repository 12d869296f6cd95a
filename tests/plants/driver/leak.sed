# Releasing a handle frees its page array no more: kernel memory leaked on every pin.
/^void pindma_handle_release(/,/^}/s/^\tkvfree(h->pages);$/\t\/* plant: h->pages leaked *\//
