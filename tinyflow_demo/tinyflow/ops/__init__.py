"""tinyflow's op modules (TF's tensorflow/python/ops): the TF1 functions over the library's ops.

They build on the core (tinyflow.framework: Graph, Operation, Tensor, apply_op) and never the reverse: math_ops
installs Tensor's Python operators and array_ops its indexing when imported. The package's __init__ puts their
functions into the tf.*, tf.nn.*, tf.math.*... namespaces; this __init__ imports nothing.
"""
