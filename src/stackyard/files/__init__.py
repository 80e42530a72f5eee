"""Files under a root (STACKS_DIR): browse, edit, upload, download (folders as zips).

Host-local: the central service serves it for its own host, agents for theirs. Every
path from outside goes through `confine.clean` and is opened beneath the root's
descriptor (`stackyard.fs.beneath`); operations then work on descriptors, not paths.
"""
