"""The scan's stateful-parallel-map condition sees the state a map function advances
besides stateful random ops: Keras 3 random layers (stateless random ops fed from a
seed variable they bump), tf.random.Generator, and state in functions the map calls.
Found by the corpus (corpus/programs/cnn_augment.py varied stock, and the scan of its
pipeline ruled the entry out)."""

import keras
import tensorflow as tf

import tfdet

ENTRY = "data-stateful-parallel-map"


def _step(x):
    return x * 2


def _entries(dataset):
    report = tfdet.scan(_step, example_inputs=(tf.constant([1.0]),), dataset=dataset, tf_version="2.21",
                        device="cpu", assume_patched=False)
    return {entry for hit in report.hits if hit.op_type.startswith("ParallelMap") for entry in hit.entries}


def _images():
    return tf.data.Dataset.from_tensor_slices(tf.zeros([8, 6, 6, 3])).batch(2)


def test_a_keras_random_layer_in_a_parallel_map_is_stateful():
    flip = keras.layers.RandomFlip("horizontal")
    dataset = _images().map(lambda x: flip(x, training=True), num_parallel_calls=2)
    assert ENTRY in _entries(dataset)


def test_a_generator_and_state_in_a_called_function_are_stateful():
    generator = tf.random.Generator.from_seed(1)
    assert ENTRY in _entries(_images().map(lambda x: x + generator.uniform([]), num_parallel_calls=2))
    counter = tf.Variable(0)

    @tf.function
    def bump(x):
        counter.assign_add(1)
        return x + tf.cast(counter, tf.float32)

    assert ENTRY in _entries(_images().map(bump, num_parallel_calls=2))


def test_a_pure_parallel_map_is_not():
    flip = keras.layers.RandomFlip("horizontal")
    assert ENTRY not in _entries(_images().map(lambda x: x * 2, num_parallel_calls=2))
    assert ENTRY in _entries(_images().map(lambda x: flip(x, training=True), num_parallel_calls=2))
