"""Backup destinations: one Destination protocol (`base`) with SFTP, S3-compatible and NFS
kinds, their sealed settings (`service`), and the transfers of archives to and from them."""
