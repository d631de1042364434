"""Feature vectors (one sample a row) and class labels (one integer a line), for ``knn`` and ``classify``.

========== =================== ===============================================================
format     extensions          content
========== =================== ===============================================================
npy        .npy                a 2-D numeric NumPy array (no pickles)
csv        .csv                comma-separated numbers, an optional header row, ``#`` comments
tsv        .tsv .txt .dat      numbers separated by tabs or spaces, the same header and comments
mtx        .mtx .mm            Matrix Market, dense (``array``) or sparse (``coordinate``)
========== =================== ===============================================================

Text is read by the project's byte scanner (:mod:`.tokens`), so every bad cell is reported with its line: a
cell that is not a number, NaN or an infinity, a row of another length than the first. A first row that holds a
cell which is not a number is a header, skipped. ``.gz`` is read transparently; ``-`` is stdin (its format from
``format`` or sniffed: the NumPy magic, a Matrix Market banner, else commas or blanks).
"""

from __future__ import annotations

import io
import os
import re

import numpy as np

from ..errors import InputError
from .files import named_format, read_bytes, strip_gz
from .tokens import shown, tokenize

FEATURE_FORMATS = ("npy", "csv", "tsv", "mtx")
FEATURE_EXTENSIONS = {".npy": "npy", ".csv": "csv", ".tsv": "tsv", ".txt": "tsv", ".dat": "tsv", ".mtx": "mtx",
                      ".mm": "mtx"}
NPY_MAGIC = b"\x93NUMPY"
NOT_FINITE = ("nan", "inf", "infinity")


def feature_format(path: str, data: bytes | None = None, given: str | None = None) -> str:
    """The features' format: ``given``, else the extension's, else sniffed from ``data``."""
    named = named_format(path, given, FEATURE_FORMATS, FEATURE_EXTENSIONS, "feature format")
    if named:
        return named
    if data is not None and path == "-":
        if data.startswith(NPY_MAGIC):
            return "npy"
        if data.lstrip()[:14].lower() == b"%%matrixmarket":
            return "mtx"
        first = next((line for line in data[:65536].splitlines() if line.strip() and not line.lstrip().startswith(b"#")),
                     b"")
        return "csv" if b"," in first else "tsv"
    extension = os.path.splitext(strip_gz(path))[1].lower()
    raise InputError(f"cannot tell the feature format from the extension {extension or '(none)'}; pass --format "
                     f"({', '.join(FEATURE_FORMATS)})", path)


def read_features(path: str, format: str | None = None):
    """Read feature vectors, one sample a row.

    Returns
    -------
    float64[n, d] ndarray, or a ``scipy.sparse.csr_matrix`` of shape (n, d) for a coordinate Matrix Market file.
    """
    data = read_bytes(path)
    kind = feature_format(path, data, format)
    if kind == "npy":
        return _parse_npy(data, path)
    if kind == "mtx":
        from .matrix_market import parse_matrix

        try:
            matrix = parse_matrix(data, path)
        except InputError as error:
            raise _not_finite(data, error) or error.located(path) from None
        end = data.find(b"\n")
        if b"array" in (data if end < 0 else data[:end]).lower():
            return finite_features(matrix.toarray().astype(np.float64), path)
        return finite_features(matrix.tocsr().astype(np.float64), path)
    return parse_feature_text(data, path, b"," if kind == "csv" else b"")


def parse_feature_text(data: bytes, file: str, separator: bytes = b"") -> np.ndarray:
    """float64[n, d]: the rows of a CSV (``separator`` b",") or blank-separated file; a header row is skipped."""
    lines = data.split(b"\n")
    header_line = _header_line(lines, separator)
    if header_line:
        data = b"\n".join(lines[:header_line - 1] + [b"#"] + lines[header_line:])  # the header, a comment now
    try:
        tokens = tokenize(data, file, comment_chars=b"#", separator=separator)
    except InputError as error:
        raise _not_finite(data, error) or error from None
    if tokens.num_lines == 0:
        raise InputError("no samples: expected one row of numbers per sample", file, header_line or 1)
    if separator:
        _check_cells(data, file)
    counts = tokens.counts()
    width = int(counts[0])
    ragged = np.flatnonzero(counts != width)
    if ragged.size:
        raise InputError(f"this row has {counts[ragged[0]]} values, the first row {width}", file,
                         int(tokens.line_number[ragged[0]]))
    overflow = np.flatnonzero(~np.isfinite(tokens.values))  # a number beyond float64's range, e.g. 1e309
    if overflow.size:
        token = int(overflow[0])
        raise InputError(f"{tokens.values[token]} is not a finite number (out of float64's range)", file,
                         tokens.line_of_token(token))
    return tokens.values.reshape(tokens.num_lines, width)


def _header_line(lines: list[bytes], separator: bytes) -> int:
    """The 1-based line of a header row (the first content row, when one of its cells is not a number), else 0."""
    for number, line in enumerate(lines, start=1):
        text = line.strip()
        if not text or text.startswith(b"#"):
            continue
        cells = text.split(separator) if separator else text.split()
        for cell in cells:
            cell = cell.strip()
            if not cell:
                continue
            try:
                float(cell)
            except ValueError:
                return number
        return 0
    return 0


_EMPTY_CELL = re.compile(rb"(?m)^[ \t]*,|,[ \t\r]*,|,[ \t\r]*$")


def _check_cells(data: bytes, file: str) -> None:
    """InputError at the first line of a CSV with an empty cell (a leading, doubled or trailing comma)."""
    for match in _EMPTY_CELL.finditer(data):
        start = data.rfind(b"\n", 0, match.start()) + 1
        if data[start:match.start() + 1].lstrip().startswith(b"#"):
            continue  # a comment
        raise InputError("an empty cell (every sample needs a value for every feature)", file,
                         data.count(b"\n", 0, match.start()) + 1)


def _not_finite(data: bytes, error: InputError) -> InputError | None:
    """An error that names NaN or an infinity, when the bad token of ``error`` is one; else None."""
    if not error.line:
        return None
    line = data.split(b"\n")[error.line - 1] if error.line <= data.count(b"\n") + 1 else b""
    for cell in line.replace(b",", b" ").split():
        if cell.lstrip(b"+-").lower().decode("latin-1") in NOT_FINITE:
            return InputError(f"{shown(cell)} is not a finite number", error.file, error.line)
    return None


def _parse_npy(data: bytes, file: str) -> np.ndarray:
    if not data.startswith(NPY_MAGIC):
        raise InputError("not a NumPy .npy file (no \\x93NUMPY magic)", file)
    try:
        values = np.load(io.BytesIO(data), allow_pickle=False)
    except ValueError as error:
        raise InputError(f"cannot read the .npy file: {error}", file) from None
    except Exception as error:  # a truncated or corrupt array: numpy raises several kinds
        raise InputError(f"cannot read the .npy file: {type(error).__name__}: {error}", file) from None
    if values.dtype.kind not in "biuf":
        raise InputError(f"expected a numeric array, got dtype {values.dtype}", file)
    if values.ndim != 2:
        raise InputError(f"expected a 2-D array (one sample a row), got shape {values.shape}", file)
    return finite_features(values.astype(np.float64), file)


def finite_features(values, file: str | None = None):
    """``values`` (ndarray or sparse), or InputError naming the first sample and feature that is not finite (in
    ``file``, where they were read from one)."""
    stored = values.data if hasattr(values, "tocoo") else values
    bad = ~np.isfinite(stored)
    if bad.any():
        if hasattr(values, "tocoo"):
            coo = values.tocoo()
            first = int(np.flatnonzero(~np.isfinite(coo.data))[0])
            row, column, value = coo.row[first], coo.col[first], coo.data[first]
        else:
            row, column = np.argwhere(bad)[0]
            value = values[row, column]
        raise InputError(f"sample {row}, feature {column}: {value} is not a finite number", file)
    return values


def read_labels(path: str, num_samples: int | None = None) -> np.ndarray:
    """Class labels, one integer a line (``#`` and ``%`` comments); int64[num_samples]. With ``num_samples``, a
    file of another length is an error at its first extra line (or its last line when it is short)."""
    data = read_bytes(path)
    tokens = tokenize(data, path, comment_chars=b"#%")
    wrong = np.flatnonzero(tokens.counts() != 1)
    if wrong.size:
        raise InputError("each line must hold exactly one label", path, int(tokens.line_number[wrong[0]]))
    labels = tokens.require_int(0, tokens.values.shape[0], path, "an integer label")
    if num_samples is not None and labels.shape[0] != num_samples:
        line = int(tokens.line_number[num_samples]) if labels.shape[0] > num_samples else (
            int(tokens.line_number[-1]) if tokens.num_lines else 1)
        raise InputError(f"{labels.shape[0]} labels for {num_samples} samples", path, line)
    return labels
