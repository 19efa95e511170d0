"""Byte-level language models written against TensorFlow 1.x's API (tinyflow graph mode): a decoder-only
Transformer (transformer.py) and a multiplicative LSTM (mlstm.py), the Dali paper's two sequence
workloads, with the training/evaluation/sampling helpers they share (lm.py) and the text corpus (text.py)."""
