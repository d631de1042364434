"""A numba byte scanner shared by every text reader.

It turns a whole file (bytes) into numbers plus per-line bookkeeping in two linear passes, so that
readers never loop over tokens in Python, and every malformed token is reported with its line.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from ..errors import InputError

ERR_NONE, ERR_BAD_TOKEN, ERR_TOO_LARGE = 0, 1, 2
MANTISSA_DIGITS = 18  # significant digits kept in an int64 mantissa (10**18 < 2**63), more than float64 holds
_MAX_EXACT = 2.0 ** 53

_POW10 = np.array([10.0 ** i for i in range(23)])


@numba.njit(cache=True, inline="always")
def _is_space(c, separator):
    return c == 32 or c == 9 or c == 13 or c == 11 or c == 12 or c == separator


@numba.njit(cache=True, inline="always")
def _is_alpha(c):
    return (65 <= c <= 90) or (97 <= c <= 122)


@numba.njit(cache=True, inline="always")
def _parse_number(data, p, separator):
    """The number at data[p:] (uint8), up to the next blank, separator or newline: (position after it, value
    float64, written as an integer of at most 2**53, error code). ERR_BAD_TOKEN: not a number, or not followed
    by a blank; ERR_TOO_LARGE: an integer of more than 2**53."""
    n = data.shape[0]
    c = data[p]
    negative = False
    if c == 45 or c == 43:
        negative = c == 45
        p += 1
    mantissa = 0
    digits = 0       # digits written
    kept = 0         # significant digits in the mantissa (leading zeros are not)
    dropped = 0      # integer digits beyond MANTISSA_DIGITS, each a factor of 10
    frac_digits = 0  # fraction digits in the mantissa
    integral = True
    while p < n and 48 <= data[p] <= 57:
        if kept < MANTISSA_DIGITS:
            mantissa = mantissa * 10 + (data[p] - 48)
            if mantissa > 0:
                kept += 1
        else:
            dropped += 1
        digits += 1
        p += 1
    if p < n and data[p] == 46:  # '.'
        integral = False
        p += 1
        while p < n and 48 <= data[p] <= 57:
            if kept < MANTISSA_DIGITS:  # fraction digits beyond those are dropped
                mantissa = mantissa * 10 + (data[p] - 48)
                frac_digits += 1
                if mantissa > 0:
                    kept += 1
            digits += 1
            p += 1
    exponent = 0
    if digits > 0 and p < n and (data[p] == 101 or data[p] == 69):  # e E
        integral = False
        p += 1
        exp_negative = False
        if p < n and (data[p] == 45 or data[p] == 43):
            exp_negative = data[p] == 45
            p += 1
        exp_digits = 0
        while p < n and 48 <= data[p] <= 57:
            if exponent < 10000:
                exponent = exponent * 10 + (data[p] - 48)
            exp_digits += 1
            p += 1
        if exp_digits == 0:
            return p, 0.0, False, ERR_BAD_TOKEN
        if exp_negative:
            exponent = -exponent
    if digits == 0 or (p < n and not _is_space(data[p], separator) and data[p] != 10):
        return p, 0.0, False, ERR_BAD_TOKEN
    if integral and (kept + dropped > 18 or mantissa > 9007199254740992):
        return p, 0.0, False, ERR_TOO_LARGE
    value = float(mantissa)
    scale = exponent - frac_digits + dropped
    if mantissa == 0:  # zero whatever the exponent: 0 * 10 ** 309 would be 0 * inf, a NaN
        scale = 0
    if scale > 0:
        value = value * (_POW10[scale] if scale <= 22 else 10.0 ** scale)
    elif scale < 0:
        value = value / (_POW10[-scale] if scale >= -22 else 10.0 ** (-scale))
    return p, -value if negative else value, integral, ERR_NONE


@numba.njit(cache=True)
def _scan(data, comment_chars, separator, keep_blank, allow_tags, fill,
          values, is_int, line_first, line_number, line_tag):
    """One pass over ``data`` (uint8). With ``fill`` False it only counts.

    Returns (num_tokens, num_lines, error_code, error_line, error_offset).
    Content lines are those that are not comments (first non-blank char in ``comment_chars``) and,
    unless ``keep_blank``, not blank. ``line_first[i]`` is the first token of content line i.
    """
    n = data.shape[0]
    pos = 0
    physical = 1
    num_tokens = 0
    num_lines = 0
    while pos < n:
        # start of a physical line: skip leading blanks
        p = pos
        while p < n and _is_space(data[p], separator):
            p += 1
        is_comment = False
        if p < n:
            for c in comment_chars:
                if data[p] == c:
                    is_comment = True
        if is_comment or ((p >= n or data[p] == 10) and not keep_blank):
            while p < n and data[p] != 10:
                p += 1
            pos = p + 1
            physical += 1
            continue
        if fill:
            line_first[num_lines] = num_tokens
            line_number[num_lines] = physical
            line_tag[num_lines] = 0
        if allow_tags and p < n and _is_alpha(data[p]):
            if fill:
                line_tag[num_lines] = data[p]
            while p < n and data[p] != 10 and _is_alpha(data[p]):   # skip leading words ("p sp")
                while p < n and _is_alpha(data[p]):
                    p += 1
                while p < n and _is_space(data[p], separator):
                    p += 1
        num_lines += 1
        while p < n and data[p] != 10:
            c = data[p]
            if _is_space(c, separator):
                p += 1
                continue
            start = p
            p, value, integral, code = _parse_number(data, p, separator)
            if code != ERR_NONE:
                return num_tokens, num_lines, code, physical, start
            if fill:
                values[num_tokens] = value
                is_int[num_tokens] = integral
            num_tokens += 1
        pos = p + 1
        physical += 1
    if fill:
        line_first[num_lines] = num_tokens
    return num_tokens, num_lines, ERR_NONE, 0, 0


@dataclass
class Tokens:
    """Numbers of a text file, grouped by content line.

    Attributes
    ----------
    values : float64[num_tokens]
    is_int : bool[num_tokens]
        The token was written as an integer (no '.', no exponent) of at most 2**53.
    line_first : int64[num_lines + 1]
        Tokens of content line i are ``values[line_first[i]:line_first[i+1]]``.
    line_number : int64[num_lines]
        The physical (1-based) line number of each content line, for error messages.
    line_tag : uint8[num_lines]
        First letter of a leading word (DIMACS ``a``/``p``), 0 if none (only with ``allow_tags``).
    """

    values: np.ndarray
    is_int: np.ndarray
    line_first: np.ndarray
    line_number: np.ndarray
    line_tag: np.ndarray

    @property
    def num_lines(self) -> int:
        return self.line_number.shape[0]

    def counts(self) -> np.ndarray:
        """int64[num_lines]: tokens per content line."""
        return np.diff(self.line_first)

    def line(self, i: int) -> np.ndarray:
        return self.values[self.line_first[i]:self.line_first[i + 1]]

    def line_of_token(self, token: int) -> int:
        """Physical line number of a token index."""
        i = int(np.searchsorted(self.line_first, token, side="right")) - 1
        return int(self.line_number[min(max(i, 0), self.num_lines - 1)]) if self.num_lines else 0

    def require_int(self, begin: int, end: int, file: str, what: str = "an integer") -> np.ndarray:
        """int64 view of tokens [begin, end), or InputError at the first non-integer token."""
        bad = np.flatnonzero(~self.is_int[begin:end])
        if bad.size:
            token = begin + int(bad[0])
            raise InputError(f"expected {what}, found {_show(self.values[token])}", file, self.line_of_token(token))
        return self.values[begin:end].astype(np.int64)


SHOWN_BYTES = 24  # an error message quotes at most this many bytes of what it found


def shown(raw: bytes) -> str:
    """Bytes found in an input, quoted for a one-line message: control and non-ASCII bytes escaped (``\\x00``),
    cut after SHOWN_BYTES bytes (``...``), so binary junk never reaches the terminal raw."""
    text = ascii(raw[:SHOWN_BYTES].decode("latin-1"))
    return text + "..." if len(raw) > SHOWN_BYTES else text


def _show(value: float) -> str:
    return repr(float(value)).removesuffix(".0") if np.isfinite(value) else str(value)


def tokenize(data: bytes, file: str, comment_chars: bytes = b"%", separator: bytes = b"",
             keep_blank: bool = False, allow_tags: bool = False) -> Tokens:
    """Scan ``data`` into :class:`Tokens`; a malformed token raises ``InputError`` with its line."""
    buffer = np.frombuffer(data, dtype=np.uint8)
    comments = np.frombuffer(comment_chars, dtype=np.uint8).copy()
    sep = separator[0] if separator else 32
    empty_f, empty_b = np.zeros(0, np.float64), np.zeros(0, np.bool_)
    empty_i, empty_u = np.zeros(1, np.int64), np.zeros(0, np.uint8)
    num_tokens, num_lines, code, line, offset = _scan(buffer, comments, sep, keep_blank, allow_tags, False,
                                                      empty_f, empty_b, empty_i, empty_i, empty_u)
    if code != ERR_NONE:
        end = offset
        while end < len(data) and end - offset <= SHOWN_BYTES and data[end:end + 1] not in (b" ", b"\t", b"\n",
                                                                                          b"\r", b","):
            end += 1
        text = shown(data[offset:end])
        if code == ERR_TOO_LARGE:
            raise InputError(f"number {text} is too large", file, line)
        raise InputError(f"expected a number, found {text}", file, line)
    values = np.empty(num_tokens, np.float64)
    is_int = np.empty(num_tokens, np.bool_)
    line_first = np.empty(num_lines + 1, np.int64)
    line_number = np.empty(num_lines, np.int64)
    line_tag = np.empty(num_lines, np.uint8)
    _scan(buffer, comments, sep, keep_blank, allow_tags, True, values, is_int, line_first, line_number, line_tag)
    return Tokens(values, is_int, line_first, line_number, line_tag)
