"""Records as stored in a partition: record batches v2 (batch.py, compression.py) and the
group coordinator's records of `__consumer_offsets` (coordinator.py, schemas.py)."""
