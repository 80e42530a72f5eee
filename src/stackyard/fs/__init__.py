"""File-system helpers every package uses.

- `beneath`: open a path relative to a directory descriptor without ever leaving it
  (openat2 RESOLVE_BENEATH where the kernel has it, an O_NOFOLLOW walk otherwise).
- `at`: operations on (directory descriptor, name): atomic writes, renames that never
  replace, temporary files, iterative removal of a whole tree.
- `errors`: OSError -> the error tree, in one function.
"""
