"""tensorflow.examples.tutorials.mnist: input_data.read_data_sets, as the TF1 MNIST tutorials import it."""
