"""two_settings.py's model written for Keras 2 and Keras 3 alike (tf.keras, a tf op in the
Lambda, one batch size for both inputs): to compare the fingerprints TF 2.15 and TF 2.21 record.

    /path/to/tf215/bin/python -m tfdet locate --record v215.jsonl examples/locate/two_versions.py
    tfdet locate --record v221.jsonl examples/locate/two_versions.py
    tfdet locate --compare v215.jsonl v221.jsonl
"""

import numpy as np
import tensorflow as tf
from tensorflow import keras

keras.utils.set_random_seed(0)
signal = np.random.RandomState(0).standard_normal((256, 39063)).astype("float32")
features = np.random.RandomState(1).standard_normal((256, 1024)).astype("float32")
features_in = keras.Input((1024,), name="features")
signal_in = keras.Input((39063,), name="signal")
hidden = keras.layers.Dense(256, name="dense")(features_in)
total = keras.layers.Lambda(lambda t: tf.reduce_sum(t), name="total")(signal_in)
model = keras.Model([features_in, signal_in], [hidden, total])
hidden_out, total_out = model.predict_on_batch([features, signal])
print("total", total_out)
