"""A small Keras model whose predictions change with a setting of the machine
they run on, each setting bitwise stable run to run (TF 2.21 CPU, 2 cores):

- its Dense layer is a MatMul 256x1024 . 1024x256: oneDNN's kernel
  (TF_ENABLE_ONEDNN_OPTS=1, TF's default on x86 Linux) sums in another order
  than Eigen's (=0);
- its total is a sum of 10,000,019 floats, which Eigen splits over the
  intra-op threads: 1 thread and 2 threads add in different orders.

    tfdet locate --between TF_ENABLE_ONEDNN_OPTS=0 TF_ENABLE_ONEDNN_OPTS=1 examples/locate/two_settings.py
    tfdet locate --between threads=1 threads=2 examples/locate/two_settings.py
"""

import numpy as np
import keras

keras.utils.set_random_seed(0)
# whether another order of the same sum changes its bits depends on the values: these do
signal = np.random.RandomState(0).standard_normal((1, 10000019)).astype("float32")
features = np.random.RandomState(1).standard_normal((256, 1024)).astype("float32")

features_in = keras.Input((1024,), name="features")
signal_in = keras.Input((10000019,), name="signal")
hidden = keras.layers.Dense(256, name="dense")(features_in)
total = keras.layers.Lambda(lambda t: keras.ops.sum(t), name="total")(signal_in)
model = keras.Model([features_in, signal_in], [hidden, total])
hidden_out, total_out = model.predict_on_batch([features, signal])
print("hidden[0, :3]", hidden_out[0, :3], "total", total_out)
