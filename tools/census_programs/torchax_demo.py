"""torchax quick start: a torch nn.Module run on JAX arrays; jax_jit of its forward."""
import jax
import jax.numpy as jnp
import torch
import torchax
from _out import emit

torchax.enable_globally()
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.linspace(-1, 1, p.numel()).reshape(p.shape))
model.to("jax")
x = torch.ones(3, 4, device="jax")
y = model(x)
z = torchax.interop.jax_jit(lambda a: (a * 2).sum(0))(torch.arange(6.0, device="jax").reshape(2, 3))
emit({"y": y.jax(), "z": z.jax() if hasattr(z, "jax") else z})
