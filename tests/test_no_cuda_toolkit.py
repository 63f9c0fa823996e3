"""The kernel lab imports on a machine with no CUDA toolkit (a learner's laptop, Binder).

numba-cuda's simulator loads the CUDA runtime library when it is imported; the course depends on
the runtime's wheel for that. This test hides /usr/local (where a toolkit lives on a developer's
machine) in a private mount namespace and imports the lab there: it needs root and unshare, and
is skipped without them.
"""

import os
import shutil
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(not (hasattr(os, "geteuid") and os.geteuid() == 0 and shutil.which("unshare")),
                                reason="needs root and unshare to hide /usr/local")


def test_the_kernel_lab_imports_without_a_cuda_toolkit():
    code = "import course_lib.kernels as k; k.cuda.jit; print('imported')"
    script = f"mount -t tmpfs none /usr/local && test ! -e /usr/local/cuda && {sys.executable} -c \"{code}\""
    result = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, text=True, timeout=120)
    if result.returncode != 0 and "mount" in result.stderr and "imported" not in result.stdout:
        if "permission denied" in result.stderr.lower() or "operation not permitted" in result.stderr.lower():
            pytest.skip(f"no private mount namespace here: {result.stderr.strip()[:120]}")
    assert result.returncode == 0 and "imported" in result.stdout, result.stderr[-2000:]
