"""keras 3 (jax backend) quick start: a small Sequential model compiled, fit, evaluated."""
import os

os.environ["KERAS_BACKEND"] = "jax"
import keras
import numpy as np
from _out import emit

keras.utils.set_random_seed(0)
x = np.random.RandomState(0).normal(size=(64, 4)).astype("float32")
y = (x @ np.array([1.0, -1.0, 0.5, 2.0], "float32") > 0).astype("float32")
model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8, activation="relu"),
                          keras.layers.Dense(1, activation="sigmoid")])
model.compile(optimizer=keras.optimizers.SGD(0.1), loss="binary_crossentropy",
              metrics=["accuracy"])
h = model.fit(x, y, batch_size=16, epochs=3, verbose=0, shuffle=False)
ev = model.evaluate(x, y, verbose=0)
emit({"loss": h.history["loss"], "eval": ev, "pred": model.predict(x[:3], verbose=0),
      "backend": keras.backend.backend()}, tol=1e-4)
