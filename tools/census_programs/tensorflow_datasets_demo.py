"""tensorflow-datasets (huggingface extra, which brings jax): its JAX helper, the split of
this JAX process (``tfds.split_for_jax_process``), beside the even splits it is made of,
and a batch turned into JAX arrays as its guides do (``jnp.asarray`` of NumPy examples)."""
import numpy as np
import jax
import jax.numpy as jnp
import tensorflow_datasets as tfds
from _out import emit

splits = [str(tfds.split_for_jax_process(s)) for s in ("train", "train[:75%]", "test[10:90]")]
even = [str(s) for s in tfds.even_splits("train", n=3)]
batch = {"image": np.arange(24, dtype=np.uint8).reshape(2, 3, 4), "label": np.array([3, 7])}
arrays = jax.tree_util.tree_map(jnp.asarray, batch)
emit({"splits": splits, "even": even, "process": [jax.process_index(), jax.process_count()],
      "image_mean": jnp.mean(arrays["image"].astype(jnp.float32)),
      "bf16": jnp.asarray(batch["image"], jnp.bfloat16).astype(jnp.float32).sum()})
