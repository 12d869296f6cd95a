# PIN_LONGTERM pins without FOLL_LONGTERM: a short pin that claims to be a long one.
s/gup_flags | FOLL_LONGTERM, pages/gup_flags, pages \/* plant: no FOLL_LONGTERM *\//
