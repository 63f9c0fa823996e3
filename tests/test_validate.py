import math

import numpy as np
import pytest

from course_lib._validate import check_array, check_choice, check_int, check_number


def test_check_number():
    assert check_number("x", 3) == 3.0
    for bad, exc in [(math.nan, ValueError), (math.inf, ValueError), ("1", TypeError), (True, TypeError)]:
        with pytest.raises(exc, match="x"):
            check_number("x", bad)
    with pytest.raises(ValueError, match="> 0"):
        check_number("x", 0, min_value=0, allow_min=False)
    with pytest.raises(ValueError, match="<= 1"):
        check_number("x", 2, max_value=1)


def test_check_int_and_choice_and_array():
    assert check_int("n", 4.0) == 4
    with pytest.raises(TypeError, match="n must be an integer"):
        check_int("n", 4.5)
    with pytest.raises(ValueError, match="n must be >= 1"):
        check_int("n", 0, min_value=1)
    assert check_choice("p", "BF16", ["bf16", "fp8"]) == "bf16"
    with pytest.raises(ValueError, match="one of"):
        check_choice("p", "fp7", ["bf16"])
    assert check_array("a", [1, 2]).dtype == float
    with pytest.raises(ValueError, match="finite"):
        check_array("a", [1, np.nan])
    with pytest.raises(ValueError, match="dimension"):
        check_array("a", [[1]], ndim=1)


def test_lookup_by_name_is_forgiving_and_suggests():
    from types import SimpleNamespace

    from course_lib._validate import lookup_by_name, name_key
    entry = SimpleNamespace(name="Llama 3.1 8B")
    table = {name_key(entry.name): entry}
    assert lookup_by_name("model", "llama-3.1_8b", table, ["Llama 3.1 8B"], "x", "models") is entry
    with pytest.raises(ValueError, match="Did you mean 'Llama 3.1 8B'"):
        lookup_by_name("model", "llama 3.1 7b", table, ["Llama 3.1 8B"], "x", "models")
    with pytest.raises(TypeError, match="model must be a name"):
        lookup_by_name("model", 8, table, [], "x", "models")
