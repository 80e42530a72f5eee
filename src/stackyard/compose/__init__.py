"""The compose CLI: which tool is installed and what it supports."""
