"""The roofline explorer: wiring only; moving a control changes the result and the image."""

import matplotlib

matplotlib.use("Agg")

from course_lib.widgets.roofline import explore_matmul, roofline_explorer  # noqa: E402


def test_explorer_updates_on_control_change():
    ex = roofline_explorer("H100 SXM", "bf16")
    before_image, before = ex.image.value, ex.result[0]
    assert before.bound == "memory"
    ex.controls["m"].value = 8192
    assert ex.result[0].bound == "compute"
    assert ex.image.value != before_image
    ex.controls["accelerator"].value = "V100 SXM2"        # has no bf16: precision must follow
    assert ex.controls["precision"].value in ("fp16", "fp32", "fp64")
    assert ex.result[0].accelerator == "V100 SXM2"


def test_compute_step_is_pure():
    a = explore_matmul("L4", "fp8", 64, 4096, 4096, 2)
    b = explore_matmul("L4", "fp8", 64, 4096, 4096, 2)
    assert a == b


def test_bad_precision_is_clear():
    import pytest
    with pytest.raises(ValueError, match="precision must be one of"):
        roofline_explorer("TPU v5e", "fp32")
