#!/usr/bin/env python3
"""replace.py DIR sync|nosync - replace DIR/data by "new" through DIR/data.tmp.

The crash-state checker's own test (run_crash.sh): with `sync` the textbook
atomic replacement (write, fsync the file, rename, fsync the directory), whose
every crash state holds "old" or "new"; with `nosync` the same without the
fsyncs, which the model must catch (a rename that persisted before the bytes).
"""
import os
import sys

d, sync = sys.argv[1], sys.argv[2] == 'sync'
fd = os.open(d + '/data.tmp', os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
os.write(fd, b'new')
if sync:
    os.fsync(fd)
os.close(fd)
os.rename(d + '/data.tmp', d + '/data')
if sync:
    dfd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
    os.fsync(dfd)
    os.close(dfd)
