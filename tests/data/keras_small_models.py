"""Keras 3 (JAX backend) builds, fits, evaluates and predicts with small seeded models; run
by tests/test_keras_dropin.py under ``python -m traxla.as_jax`` (and under JAX for its
numbers). Prints one JSON line of results."""
import json
import os

os.environ["KERAS_BACKEND"] = "jax"
import numpy as np  # noqa: E402

import keras  # noqa: E402

L = keras.layers
keras.utils.set_random_seed(0)
rng = np.random.default_rng(0)
x = rng.normal(size=(16, 4)).astype("float32")
y = rng.normal(size=(16, 1)).astype("float32")
out = {}

seq = keras.Sequential([keras.Input((4,)), L.Dense(8, activation="relu"), L.Dense(1)])
seq.compile(optimizer="adam", loss="mse")
out["seq_fit"] = seq.fit(x, y, epochs=2, batch_size=8, verbose=0).history["loss"]
out["seq_eval"] = seq.evaluate(x, y, verbose=0)
out["seq_pred"] = seq.predict(x[:3], verbose=0).ravel().tolist()

inp = keras.Input((4,))
h = L.Dense(5, activation="tanh")(inp)
fn = keras.Model(inp, L.Dense(2)(L.Concatenate()([h, inp])))
fn.compile(optimizer="sgd", loss="mse", metrics=["mae"])
y2 = rng.normal(size=(16, 2)).astype("float32")
hist = fn.fit(x, y2, epochs=2, batch_size=4, verbose=0).history
out["fn_fit"] = hist["loss"] + hist["mae"]
out["fn_eval"] = fn.evaluate(x, y2, verbose=0)
out["fn_pred"] = fn.predict(x[:2], verbose=0).ravel().tolist()

# variable length: keras infers the Lambda's output shape by tracing it with a symbolic
# dimension (symbolic_shape with a constraint, then eval_shape; the stride makes floordiv)
seq_in = keras.Input((None, 3))
pooled = L.GlobalAveragePooling1D()(L.Lambda(lambda t: t[:, ::2] * 2.0)(seq_in))
var = keras.Model(seq_in, L.Dense(1)(pooled))
out["var_shape"] = str(var.layers[1].output.shape)
out["var_pred"] = var.predict(rng.normal(size=(2, 5, 3)).astype("float32"),
                              verbose=0).ravel().tolist()
print("RESULTS " + json.dumps(out))
