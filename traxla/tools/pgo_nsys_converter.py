"""``jax.tools.pgo_nsys_converter``: not supported by traxla, which does not have JAX's
command-line tools (jax.tools). The module imports and its names exist with JAX's kinds; using
one raises NotImplementedError naming the capability."""

import argparse
import csv
import os
import re
import shutil
import subprocess
import sys

from traxla.base.unsupported import fill as _fill

_CAPABILITY = "JAX's command-line tools (jax.tools)"
