"""Small dataset loaders for the demos."""
