"""Issue 23: checks that are hard to fool. Wrong kernels that once passed now fail, with a
message and a failure class that name the mistake; a right kernel once refused now passes."""

from __future__ import annotations

import pytest

from course_lib.kernels.tasks import KernelCheckError, check_kernel
from kernel_solutions import ONCE_PASSED, dot_shared_atomic_kernel


@pytest.mark.parametrize("variant", sorted(ONCE_PASSED))
def test_once_passing_wrong_kernel_fails(variant):
    task, kernel, failure, words = ONCE_PASSED[variant]
    with pytest.raises(KernelCheckError) as err:
        check_kernel(task, kernel)
    msg = str(err.value)
    assert words in msg, msg
    assert err.value.failure == failure, msg
    assert "read again: Lesson 09, section '" in msg, msg


def test_shared_memory_atomic_dot_product_passes():
    runs = check_kernel("dot", dot_shared_atomic_kernel)
    for run in runs:
        assert run.profile.shared_atomics == min(run.sizes["n"], run.profile.launch.n_threads)
        assert run.profile.global_atomics == run.profile.launch.n_blocks
