"""A custom tf.estimator on MNIST in the style of TensorFlow 1.x's "Creating Estimators in tf.estimator"
and cnn_mnist.py tutorials: a model_fn returning EstimatorSpecs for TRAIN / EVAL / PREDICT, numpy_input_fn,
RunConfig, train, evaluate, predict and train_and_evaluate."""
import numpy as np
import tensorflow as tf
from tensorflow.examples.tutorials.mnist import input_data

tf.app.flags.DEFINE_integer("steps", 2000, "Training steps.")
tf.app.flags.DEFINE_string("model_dir", "/tmp/mnist_estimator", "Checkpoint directory.")
tf.app.flags.DEFINE_string("data_dir", "/tmp/mnist_data", "MNIST directory.")
FLAGS = tf.app.flags.FLAGS


def model_fn(features, labels, mode, params):
    """A two-layer MLP classifier."""
    net = tf.reshape(features["x"], [-1, 784])
    for units in params["hidden_units"]:
        net = tf.layers.dense(net, units=units, activation=tf.nn.relu)
    net = tf.layers.dropout(net, rate=0.2, training=mode == tf.estimator.ModeKeys.TRAIN)
    logits = tf.layers.dense(net, params["n_classes"], activation=None)
    predicted_classes = tf.argmax(logits, 1)
    predictions = {
        "class_ids": predicted_classes[:, tf.newaxis],
        "probabilities": tf.nn.softmax(logits, name="softmax_tensor"),
        "logits": logits,
    }
    if mode == tf.estimator.ModeKeys.PREDICT:
        return tf.estimator.EstimatorSpec(mode, predictions=predictions)

    loss = tf.losses.sparse_softmax_cross_entropy(labels=labels, logits=logits)
    accuracy = tf.metrics.accuracy(labels=labels, predictions=predicted_classes, name="acc_op")
    metrics = {"accuracy": accuracy}
    tf.summary.scalar("accuracy", accuracy[1])
    if mode == tf.estimator.ModeKeys.EVAL:
        return tf.estimator.EstimatorSpec(mode, loss=loss, eval_metric_ops=metrics)

    optimizer = tf.train.AdamOptimizer(learning_rate=params["learning_rate"])
    train_op = optimizer.minimize(loss, global_step=tf.train.get_global_step())
    return tf.estimator.EstimatorSpec(mode, loss=loss, train_op=train_op)


def main(unused_argv):
    tf.logging.set_verbosity(tf.logging.INFO)
    mnist = input_data.read_data_sets(FLAGS.data_dir)
    train_data = mnist.train.images
    train_labels = np.asarray(mnist.train.labels, dtype=np.int32)
    eval_data = mnist.test.images
    eval_labels = np.asarray(mnist.test.labels, dtype=np.int32)

    config = tf.estimator.RunConfig(model_dir=FLAGS.model_dir, save_checkpoints_steps=FLAGS.steps // 2,
                                    tf_random_seed=42, log_step_count_steps=100)
    classifier = tf.estimator.Estimator(
        model_fn=model_fn, config=config,
        params={"hidden_units": [128, 64], "n_classes": 10, "learning_rate": 1e-3})

    tensors_to_log = {"probabilities": "softmax_tensor"}
    train_input_fn = tf.estimator.inputs.numpy_input_fn(
        x={"x": train_data}, y=train_labels, batch_size=100, num_epochs=None, shuffle=True)
    logging_hook = tf.train.LoggingTensorHook(tensors=tensors_to_log, every_n_iter=100)
    classifier.train(input_fn=train_input_fn, steps=FLAGS.steps // 2, hooks=[logging_hook])

    eval_input_fn = tf.estimator.inputs.numpy_input_fn(
        x={"x": eval_data}, y=eval_labels, num_epochs=1, shuffle=False)
    train_spec = tf.estimator.TrainSpec(input_fn=train_input_fn, max_steps=FLAGS.steps)
    eval_spec = tf.estimator.EvalSpec(input_fn=eval_input_fn, steps=None, throttle_secs=0)
    tf.estimator.train_and_evaluate(classifier, train_spec, eval_spec)

    eval_results = classifier.evaluate(input_fn=eval_input_fn)
    print("eval global_step %d" % eval_results["global_step"])
    print("eval accuracy %.4f" % eval_results["accuracy"])
    print("eval loss %.4f" % eval_results["loss"])

    predict_input_fn = tf.estimator.inputs.numpy_input_fn(
        x={"x": eval_data[:20]}, num_epochs=1, shuffle=False)
    predictions = list(classifier.predict(input_fn=predict_input_fn))
    predicted = [int(p["class_ids"][0]) for p in predictions]
    correct = sum(int(p == l) for p, l in zip(predicted, eval_labels[:20]))
    print("predicted %d examples, %d correct" % (len(predictions), correct))
    print("probabilities sum %.4f" % float(np.sum(predictions[0]["probabilities"])))
    print("checkpoint %s" % classifier.latest_checkpoint())


if __name__ == "__main__":
    tf.app.run()
