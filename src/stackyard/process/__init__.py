"""The programs the service starts, and the process it runs in.

- `children`: every program the service runs (compose and the docker CLI), in a process
  group of its own, under limits, its output bounded or streamed, killed with its group
  on every exit path and at shutdown (`kill_all`);
- `request_scope`: which children belong to which request, so that they die when its
  client goes away;
- `tuning`: how hard the service leans on the machine (open-files limit, malloc arenas)
  and how nice the children of background work are;
- `groups`: signalling a child's whole process group, which the others share.
"""
