"""TensorFlow 1.x's tensorflow.examples namespace (the MNIST tutorials' input_data)."""
