"""tensorflow.python: only the public pieces TF1 programs import from it (client.timeline)."""
