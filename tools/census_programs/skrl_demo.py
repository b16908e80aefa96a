"""skrl (jax extra) quick start: its JAX backend's running standard scaler, a replay memory
and a deterministic (value) model built with flax, acting on a batch of observations."""
import numpy as np
import jax.numpy as jnp
import flax.linen as nn
import gymnasium
from skrl import config
from skrl.memories.jax import RandomMemory
from skrl.models.jax import DeterministicMixin, Model
from skrl.resources.preprocessors.jax import RunningStandardScaler
from _out import emit

config.jax.backend = "jax"
space = gymnasium.spaces.Box(low=-1, high=1, shape=(3,))
x = jnp.asarray(np.arange(12.0, dtype=np.float32).reshape(4, 3))
scaler = RunningStandardScaler(size=space, device="cpu")
scaled_train = scaler(x, train=True)
scaled = scaler(x * 2)

memory = RandomMemory(memory_size=8, num_envs=1, device="cpu")
memory.create_tensor(name="obs", size=3, dtype=jnp.float32)
for i in range(5):
    memory.add_samples(obs=jnp.full((1, 3), float(i)))
stored = np.asarray(memory.get_tensor_by_name("obs")).ravel()[:15]


class Value(DeterministicMixin, Model):
    def __init__(self, observation_space, action_space, device=None, clip_actions=False,
                 **kwargs):  # (flax re-creates the module with Model's own fields)
        Model.__init__(self, observation_space=observation_space, action_space=action_space,
                       device=device, **kwargs)
        DeterministicMixin.__init__(self, clip_actions=clip_actions)

    @nn.compact
    def __call__(self, inputs, role):
        h = nn.relu(nn.Dense(8)(inputs["observations"]))
        return nn.Dense(1)(h), {}


value = Value(space, gymnasium.spaces.Box(-1, 1, (1,)), device="cpu")
value.init_state_dict(inputs={"observations": x}, role="value")
out, _ = value.act({"observations": scaled}, role="value")
emit({"scaled_train": scaled_train, "scaled": scaled, "memory": stored, "value": out})
