"""Feature and label readers: every format against numpy's own readers (np.loadtxt, np.load) and scipy.io.mmread,
bad input as one InputError with its line, and hypothesis fuzzing (valid tables read back; junk never
raises anything but InputError)."""

import gzip
import io

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hgpart.errors import InputError
from hgpart.io.features import read_features, read_labels

from ..conftest import DATA


def write(tmp_path, name, content):
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return str(path)


def test_the_bundled_iris_is_numpys_loadtxt():
    features = read_features(str(DATA / "iris.csv"))
    assert features.shape == (150, 4) and features.dtype == np.float64
    assert np.array_equal(features, np.loadtxt(DATA / "iris.csv", delimiter=",", skiprows=1))
    labels = read_labels(str(DATA / "iris.labels"), 150)
    assert labels.dtype == np.int64 and np.bincount(labels).tolist() == [50, 50, 50]


@pytest.mark.parametrize("name, content", [
    ("a.csv", "# comment\nx,y,z\n1,2,3\n4.5,-6e-1,7\n\n"),
    ("a.tsv", "x\ty\tz\n1\t2\t3\n4.5\t-6e-1\t7\n"),
    ("a.txt", "1 2   3\n# a comment line\n4.5 -6e-1 7\n"),
    ("a.csv.gz", gzip.compress(b"1, 2, 3\r\n4.5,-6e-1,7\r\n")),
])
def test_text_tables_with_or_without_a_header(tmp_path, name, content):
    features = read_features(write(tmp_path, name, content))
    assert np.array_equal(features, [[1, 2, 3], [4.5, -0.6, 7]])


def test_long_numbers_keep_their_magnitude(tmp_path):
    """More digits than a mantissa holds, leading zeros among them: fraction digits beyond it are dropped, integer
    digits beyond it scale (a reading of 0.0006113235748848659 as 0.00611 was found by the fuzz test below)."""
    cells = ["0.0006113235748848659", "123456789012345678901.5", "0.00000000000000000000001234567890123456789",
             "-98765432109876543210987e-30", "1" + "0" * 30 + ".0"]
    features = read_features(write(tmp_path, "long.csv", ",".join(cells) + "\n"))
    assert np.allclose(features[0], [float(cell) for cell in cells], rtol=1e-15, atol=0)


def test_npy_and_matrix_market(tmp_path):
    dense = np.arange(12, dtype=np.float32).reshape(4, 3) - 5
    buffer = io.BytesIO()
    np.save(buffer, dense)
    assert np.array_equal(read_features(write(tmp_path, "a.npy", buffer.getvalue())), dense)
    array_file, coordinate_file = tmp_path / "dense.mtx", tmp_path / "sparse.mtx"
    scipy.io.mmwrite(str(array_file), dense.astype(np.float64))
    matrix = sp.random(20, 7, density=0.3, format="coo", random_state=3)
    scipy.io.mmwrite(str(coordinate_file), matrix)
    assert np.array_equal(read_features(str(array_file)), dense)
    sparse = read_features(str(coordinate_file))
    assert sp.issparse(sparse) and sparse.shape == (20, 7)
    assert np.allclose(sparse.toarray(), scipy.io.mmread(str(coordinate_file)).toarray())


def test_stdin_is_sniffed(monkeypatch):
    import sys

    for content, expected in [(b"a,b\n1,2\n3,4\n", [[1, 2], [3, 4]]), (b"1 2\n3 4\n", [[1, 2], [3, 4]])]:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(content)))
        assert np.array_equal(read_features("-"), expected)


@pytest.mark.parametrize("name, content, line, fragment", [
    ("a.csv", "x,y\n1,2\n3,oops\n", 3, "expected a number, found 'oops'"),
    ("a.csv", "1,2\n3,4,5\n", 2, "this row has 3 values, the first row 2"),
    ("a.csv", "1,2,3\n4,,6\n", 2, "an empty cell"),
    ("a.csv", "1,2,3\n4,5,\n", 2, "an empty cell"),
    ("a.csv", "1,2\nnan,4\n", 2, "'nan' is not a finite number"),
    ("a.tsv", "1\t2\n3\t-inf\n", 2, "'-inf' is not a finite number"),
    ("a.csv", "1,2\n# c\n3,-1E309\n", 3, "-inf is not a finite number (out of float64's range)"),
    ("a.tsv", "# only a comment\n", 1, "no samples"),
    ("a.mtx", "%%MatrixMarket matrix array real general\n2 1\n1\nNaN\n", 4, "'NaN' is not a finite number"),
    ("a.labels", "0\n1\nx\n", 3, "expected a number, found 'x'"),
    ("a.labels", "0\n1.5\n", 2, "expected an integer label, found 1.5"),
])
def test_bad_text_is_one_error_at_its_line(tmp_path, name, content, line, fragment):
    path = write(tmp_path, name, content)
    with pytest.raises(InputError) as error:
        read_labels(path) if name.endswith(".labels") else read_features(path)
    assert error.value.file == path and error.value.line == line, str(error.value)
    assert fragment in error.value.message, error.value.message


def test_bad_npy_and_bad_label_counts(tmp_path):
    for array, fragment in [(np.zeros(3), "expected a 2-D array"), (np.array([["a"]]), "numeric"),
                            (np.array([[1.0, np.inf]]), "sample 0, feature 1: inf is not a finite number")]:
        buffer = io.BytesIO()
        np.save(buffer, array)
        with pytest.raises(InputError, match=fragment):
            read_features(write(tmp_path, "a.npy", buffer.getvalue()))
    with pytest.raises(InputError, match="cannot read the .npy file"):
        read_features(write(tmp_path, "b.npy", buffer.getvalue()[:-3]))
    with pytest.raises(InputError, match="cannot tell the feature format"):
        read_features(write(tmp_path, "a.bin", "1 2\n"))
    path = write(tmp_path, "a.labels", "0\n1\n2\n")
    with pytest.raises(InputError) as short:
        read_labels(path, 4)
    assert short.value.line == 3 and "3 labels for 4 samples" in short.value.message
    with pytest.raises(InputError) as long:
        read_labels(path, 2)
    assert long.value.line == 3


cells = st.floats(allow_nan=False, allow_infinity=False, allow_subnormal=False, min_value=-1e300, max_value=1e300)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(table=st.integers(1, 6).flatmap(lambda width: st.lists(st.lists(cells, min_size=width, max_size=width),
                                                              min_size=1, max_size=12)),
       separator=st.sampled_from([",", "\t", " "]), header=st.booleans())
def test_valid_tables_read_back(tmp_path, table, separator, header):
    text = (separator.join(f"c{i}" for i in range(len(table[0]))) + "\n" if header else "")
    text += "".join(separator.join(repr(value) for value in row) + "\n" for row in table)
    path = write(tmp_path, "t.csv" if separator == "," else "t.tsv", text)
    read = read_features(path)  # the scanner's decimal conversion is within a few ulps, not always the nearest
    assert read.shape == np.shape(table) and np.allclose(read, table, rtol=1e-14, atol=1e-290)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(content=st.binary(max_size=200) | st.text(alphabet="0123456789.,-+eE \t\n#naifNA", max_size=120),
       name=st.sampled_from(["f.csv", "f.tsv", "f.npy", "f.mtx", "f.labels"]))
def test_junk_is_an_input_error_or_a_finite_table(tmp_path, content, name):
    path = write(tmp_path, name, content)
    try:
        result = read_labels(path) if name.endswith(".labels") else read_features(path)
    except InputError as error:
        assert error.file == path and "\n" not in str(error)
        return
    values = result.data if sp.issparse(result) else result
    assert np.all(np.isfinite(values)) and (name.endswith(".labels") or result.ndim == 2)
