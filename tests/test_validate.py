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


def test_sequences_instances_counts_and_flags():
    from course_lib._validate import (MAX_INT, check_bool, check_count, check_instance, check_items,
                                      check_sequence)
    rng = np.random.default_rng(7)
    n = int(rng.integers(2, 9))
    assert check_sequence("ns", n) == [n]                       # a scalar for a sequence: accepted
    assert check_sequence("ns", np.arange(n)) == list(range(n))
    for bad, exc in [(None, TypeError), ("12", TypeError), ([], ValueError)]:
        with pytest.raises(exc, match="ns"):
            check_sequence("ns", bad)
    with pytest.raises(TypeError, match="sequence"):
        check_sequence("ns", n, scalar_ok=False)
    with pytest.raises(ValueError, match="at most 3"):
        check_sequence("ns", range(n + 3), max_len=3)
    with pytest.raises(TypeError, match=r"x must be a float \(as returned by f\(\)\), got int"):
        check_instance("x", 3, float, "f()")
    assert check_items("xs", 1.5, float) == [1.5]
    with pytest.raises(TypeError, match=r"xs\[1\] must be a float"):
        check_items("xs", [1.5, 2], float)
    with pytest.raises(ValueError, match="xs must hold at least 1"):
        check_items("xs", [], float)
    for bad in ("False", 1, 0, None):
        with pytest.raises(TypeError, match="flag must be True or False"):
            check_bool("flag", bad)
    with pytest.raises(ValueError, match=r"count must be <= 100 \(too slow\), got 101"):
        check_count("count", 101, max_value=100, why="too slow")
    with pytest.raises(ValueError, match=r"n must lie within \+-2\*\*53, got 1e\+30"):
        check_int("n", 1e30)
    assert check_int("n", MAX_INT) == MAX_INT
    with pytest.raises(TypeError, match="a must hold numbers"):
        check_array("a", [True, False])
    with pytest.raises(TypeError, match="a must be array-like"):
        check_array("a", None)
