"""Readers for each file kind of a session folder, one module per kind.

Every reader is line-oriented and tolerant: it never raises on content; what it
cannot read becomes a parse issue and the field stays null.
"""

# Enters every snapshot id: after a reader change, the same files are read and parsed again.
READER_VERSION = "2"
