"""tensorflow.python.client: timeline (Chrome-trace export of a RunMetadata's step_stats)."""
