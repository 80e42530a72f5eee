"""Stacks from git: repositories, the stacks made of their folders, and the sync that
deploys exactly the stacks a commit changed (see `git.service`)."""
