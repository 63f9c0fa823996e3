"""Which CUDA numba runs: the real device when one is present, otherwise its CPU simulator.

numba-cuda reads ``NUMBA_ENABLE_CUDASIM`` once, when ``numba`` is first imported. So this module
decides before that import: with no NVIDIA GPU in sight it sets the variable to ``1`` (never
overriding a value the user set), and ``course_lib.kernels`` imports numba only afterwards. A
learner writes ``from course_lib.kernels import cuda`` and never needs to know.

The course's checker and profiler do not depend on the choice: they run the kernel's Python
source on the course's own traced executor (``course_lib.kernels.trace``), which uses numba's
simulated ``cuda`` module for the thread indices, so the same kernel can be checked on a laptop
and timed on a GPU.
"""

from __future__ import annotations

import glob
import os
import shutil
import sys

__all__ = ["gpu_present", "select_simulator", "simulator_selected"]


def gpu_present() -> bool:
    """True when this machine shows an NVIDIA driver and device (no CUDA call is made)."""
    if os.environ.get("COURSE_FORCE_SIMULATOR") == "1":
        return False
    return bool(glob.glob("/dev/nvidia[0-9]*")) and (
        shutil.which("nvidia-smi") is not None or os.path.exists("/proc/driver/nvidia/version"))


def select_simulator() -> bool:
    """Choose the simulator unless a GPU is present; return True when the simulator is (to be) used.

    Must run before ``numba`` is imported; afterwards it only reports what numba already chose.
    """
    if "numba" not in sys.modules and "NUMBA_ENABLE_CUDASIM" not in os.environ and not gpu_present():
        os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
    return simulator_selected()


def simulator_selected() -> bool:
    """True when numba's ``cuda`` is (or will be) the CPU simulator."""
    if "numba" in sys.modules:
        try:
            from numba.cuda import config as _config      # numba-cuda's own config
        except ImportError:                                 # pragma: no cover - older layouts
            from numba.core import config as _config
        return bool(getattr(_config, "ENABLE_CUDASIM", 0))
    return os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0")
