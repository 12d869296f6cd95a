# VFIO's type1 backend holding its pages with FOLL_GET, as drivers did before FOLL_PIN (and without
# FOLL_LONGTERM, which GUP refuses without FOLL_PIN): fork then no longer copies them for the child,
# which the VFIO rows must see.
# file: drivers/vfio/vfio_iommu_type1.c
# marker: get_user_pages_remote(mm, vaddr, npages, flags, /* plant */
# gone: unpin_user_page
s/ret = pin_user_pages_remote(mm, vaddr, npages, flags | FOLL_LONGTERM,/ret = get_user_pages_remote(mm, vaddr, npages, flags, \/* plant *\//;s/unpin_user_pages_dirty_lock(&page, 1, prot \& IOMMU_WRITE);/put_page(page);/;s/unpin_user_page(pages\[i\]);/put_page(pages[i]);/
