# VFIO's type1 backend pinning without FOLL_LONGTERM: the page then stays in the Movable zone.
# file: drivers/vfio/vfio_iommu_type1.c
# marker: pin_user_pages_remote(mm, vaddr, npages, flags, /* plant */
s/ret = pin_user_pages_remote(mm, vaddr, npages, flags | FOLL_LONGTERM,/ret = pin_user_pages_remote(mm, vaddr, npages, flags, \/* plant *\//
