"""The njit stable argsorts (hgpart.sorting) against numpy's stable argsort."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from hgpart.sorting import SHORT, float_keys, stable_argsort

INT64 = st.integers(min_value=-(2**63), max_value=2**63 - 1)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.integers(-3, 3), INT64), max_size=3 * SHORT))
def test_stable_argsort_is_numpys_stable_argsort(keys):
    keys = np.array(keys, dtype=np.int64)
    np.testing.assert_array_equal(stable_argsort(keys), np.argsort(keys, kind="stable"))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.sampled_from([0.0, -0.0, 1.5, -1.5, np.inf, -np.inf, 5e-324, -5e-324]),
                          st.floats(allow_nan=False)), max_size=3 * SHORT))
def test_float_keys_order_as_the_floats_with_equal_values_equal(values):
    values = np.array(values, dtype=np.float64)
    keys = float_keys(values)
    np.testing.assert_array_equal(stable_argsort(keys), np.argsort(values, kind="stable"))
    for i in range(len(values)):  # -0.0 == 0.0: one key
        assert np.array_equal(keys == keys[i], values == values[i])


def test_long_inputs_with_shared_digits_and_ties():
    rng = np.random.default_rng(7)
    for keys in (rng.integers(-5, 5, 10_000), rng.integers(0, 4, 5_000) << 40, -rng.integers(0, 2**62, 3_000),
                 np.full(1_000, -7)):
        keys = keys.astype(np.int64)
        np.testing.assert_array_equal(stable_argsort(keys), np.argsort(keys, kind="stable"))
