"""Readers for each file kind of a session folder, one module per kind, on one block layer.

Every reader is tolerant: it never raises on content; what it cannot read becomes a
parse issue, the field stays null, and the rule that needs it fails (spec §3.1).
"""

# Enters every snapshot id: when the readers change what they read, the same files make a
# new snapshot and are read again instead of keeping the old reading.
READER_VERSION = "209"
