# A pin from a user namespace charged like any other: each namespace's uids a fresh limit.
s/if (current_user_ns() != &init_user_ns)$/if (false \&\& current_user_ns() != \&init_user_ns) \/* plant: namespaces let in *\//
