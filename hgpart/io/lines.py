"""Lines of numbers read on threads, straight into arrays: lines of two or three numbers (an edge or a matrix
entry a line, :func:`read_lines`) and lines of integers (a METIS vertex's adjacency a line,
:func:`read_integer_lines`).

The text is cut into pieces of whole lines, one a thread: a first pass counts each piece's lines (and tokens),
a second reads each line's numbers with the scanner's own parser (:func:`.tokens._parse_number`, so the same
floats) into the arrays from the piece's first line on. It takes only well-formed files: anything else (a
malformed number, a line of another length, an id that is not an integer or is out of range, a count that
differs from the one expected) returns None, and the caller leaves the file to the scanner
(:func:`.tokens.tokenize`), whose checks name the line.
"""

from __future__ import annotations

import numba
import numpy as np

from ..parallel import on_threads, threads_for
from .tokens import ERR_NONE, _is_space, _parse_number

NEWLINE = 10
PIECE_BYTES = 1 << 22  # a thread per this many bytes at least


@numba.njit(cache=True, inline="always")
def _is_comment(c, comments):
    for comment in comments:
        if c == comment:
            return True
    return False


@numba.njit(cache=True, inline="always")
def _past_blanks(data, p, stop, separator):
    """The first position from p on (below stop) that is not a blank or the separator."""
    while p < stop and _is_space(data[p], separator):
        p += 1
    return p


@numba.njit(cache=True, inline="always")
def _line_end(data, p, stop):
    """The position of the newline that ends p's line (stop if none)."""
    while p < stop and data[p] != NEWLINE:
        p += 1
    return p


@numba.njit(cache=True, nogil=True)
def _count_lines(thread, bounds, data, comments, separator, counts):
    """counts[thread + 1] = content lines (neither blank nor a comment) in data[bounds[thread]:bounds[thread + 1]]."""
    p, stop = bounds[thread], bounds[thread + 1]
    found = 0
    while p < stop:
        p = _past_blanks(data, p, stop, separator)
        if p < stop and data[p] != NEWLINE and not _is_comment(data[p], comments):
            found += 1
        p = _line_end(data, p, stop) + 1
    counts[thread + 1] = found


@numba.njit(cache=True, nogil=True)
def _read_lines(thread, bounds, data, comments, separator, firsts, fewest, most, shift, first_limit, second_limit,
                lower, integral_third, first_ids, second_ids, thirds, with_third, failed):
    """The content lines of piece ``thread`` from line firsts[thread] on: first_ids, second_ids int64 (the first
    two numbers less ``shift``), thirds float64 (the third number, 1 where the line has two); with_third[thread]
    counts the lines with three. failed[0] = 1, and the piece is left, at the first line that does not hold
    ``fewest`` to ``most`` numbers, whose first two are integers in [0, first_limit) and [0, second_limit) after
    the shift (the first at least the second where ``lower``) and whose third is an integer where
    ``integral_third``."""
    p, stop = bounds[thread], bounds[thread + 1]
    line = firsts[thread]
    threes = 0
    while p < stop:
        p = _past_blanks(data, p, stop, separator)
        if p < stop and _is_comment(data[p], comments):
            p = _line_end(data, p, stop)
        if p >= stop or data[p] == NEWLINE:
            p += 1
            continue
        first = np.int64(0)
        second = np.int64(0)
        third = 1.0
        numbers = 0
        while True:
            p = _past_blanks(data, p, stop, separator)
            if p >= stop or data[p] == NEWLINE:
                break
            if numbers == most:
                failed[0] = 1
                return
            p, number, integral, code = _parse_number(data, p, separator)
            if code != ERR_NONE or (numbers < 2 and not integral) or (numbers == 2 and integral_third and not integral):
                failed[0] = 1
                return
            if numbers == 0:
                first = np.int64(number) - shift
            elif numbers == 1:
                second = np.int64(number) - shift
            else:
                third = number
            numbers += 1
        if (numbers < fewest or first < 0 or first >= first_limit or second < 0 or second >= second_limit
                or (lower and first < second)):
            failed[0] = 1
            return
        first_ids[line] = first
        second_ids[line] = second
        thirds[line] = third
        threes += numbers == 3
        line += 1
        p += 1
    with_third[thread] = threes


def read_lines(data: bytes, begin: int, comments: bytes, separator: int, fewest: int, most: int, shift: int = 0,
               first_limit: int = np.iinfo(np.int64).max, second_limit: int = np.iinfo(np.int64).max,
               lower: bool = False, integral_third: bool = False, expected: int | None = None,
               threads: int | None = None):
    """The content lines of data[begin:] (those neither blank nor starting with a byte of ``comments``, numbers
    separated by blanks or ``separator``), as (first int64[l], second int64[l], third float64[l], lines with a
    third number), or None for anything :func:`_read_lines` does not take, or ``expected`` lines that are not
    there. Read in ``threads`` pieces (default numba's threads, one per PIECE_BYTES at most)."""
    bounds, threads, buffer, comment_bytes = _pieces(data, begin, comments, threads)
    counts = np.zeros(threads + 1, dtype=np.int64)
    on_threads(_count_lines, threads, bounds, buffer, comment_bytes, separator, counts)
    firsts = np.cumsum(counts)
    lines = int(firsts[-1])
    if expected is not None and lines != expected:
        return None
    first_ids = np.empty(lines, dtype=np.int64)
    second_ids = np.empty(lines, dtype=np.int64)
    thirds = np.empty(lines, dtype=np.float64)
    with_third = np.zeros(threads, dtype=np.int64)
    failed = np.zeros(1, dtype=np.int64)
    on_threads(_read_lines, threads, bounds, buffer, comment_bytes, separator, firsts, fewest, most, shift,
               first_limit, second_limit, lower, integral_third, first_ids, second_ids, thirds, with_third, failed)
    return None if failed[0] else (first_ids, second_ids, thirds, int(with_third.sum()))


@numba.njit(cache=True, nogil=True)
def _count_tokens(thread, bounds, data, comments, separator, lines, tokens):
    """lines[thread + 1], tokens[thread + 1] = the piece's lines that are not comments (blank ones included) and
    their tokens (runs of bytes that are neither blanks nor newlines)."""
    p, stop = bounds[thread], bounds[thread + 1]
    found_lines = 0
    found_tokens = 0
    while p < stop:
        p = _past_blanks(data, p, stop, separator)
        if p < stop and _is_comment(data[p], comments):
            p = _line_end(data, p, stop) + 1
            continue
        found_lines += 1
        while p < stop and data[p] != NEWLINE:
            if _is_space(data[p], separator):
                p += 1
                continue
            found_tokens += 1
            while p < stop and data[p] != NEWLINE and not _is_space(data[p], separator):
                p += 1
        p += 1
    lines[thread + 1] = found_lines
    tokens[thread + 1] = found_tokens


@numba.njit(cache=True, nogil=True)
def _read_integers(thread, bounds, data, comments, separator, first_lines, first_tokens, line_first, values, failed):
    """The piece's lines (as :func:`_count_tokens` counts them) from line first_lines[thread] and token
    first_tokens[thread] on: line_first[line] = its first token, values int64 its numbers. failed[0] = 1, and
    the piece is left, at the first token that is not an integer."""
    p, stop = bounds[thread], bounds[thread + 1]
    line = first_lines[thread]
    token = first_tokens[thread]
    while p < stop:
        p = _past_blanks(data, p, stop, separator)
        if p < stop and _is_comment(data[p], comments):
            p = _line_end(data, p, stop) + 1
            continue
        line_first[line] = token
        line += 1
        while p < stop and data[p] != NEWLINE:
            if _is_space(data[p], separator):
                p += 1
                continue
            p, number, integral, code = _parse_number(data, p, separator)
            if code != ERR_NONE or not integral:
                failed[0] = 1
                return
            values[token] = np.int64(number)
            token += 1
        p += 1


def _pieces(data: bytes, begin: int, comments: bytes, threads: int | None) -> tuple:
    """(bounds int64[threads + 1] of pieces of whole lines of data[begin:], their number, the data as uint8, the
    comment bytes as uint8): default numba's threads, one per PIECE_BYTES at most."""
    threads = threads or threads_for(len(data) - begin, PIECE_BYTES)
    bounds = [begin]
    for thread in range(1, threads):
        cut = data.find(b"\n", max(bounds[-1], begin + (len(data) - begin) * thread // threads))
        bounds.append(len(data) if cut < 0 else cut + 1)
    return (np.array(bounds + [len(data)], dtype=np.int64), threads, np.frombuffer(data, dtype=np.uint8),
            np.frombuffer(comments, dtype=np.uint8).copy())


def read_integer_lines(data: bytes, begin: int, comments: bytes, separator: int, threads: int | None = None):
    """Every line of data[begin:] that does not start with a byte of ``comments`` (blank lines included, as
    lines of no numbers), all of whose numbers are integers: (line_first int64[lines + 1], values int64[tokens]),
    line i's numbers being values[line_first[i]:line_first[i + 1]]; None where a token is not an integer."""
    bounds, threads, buffer, comment_bytes = _pieces(data, begin, comments, threads)
    lines = np.zeros(threads + 1, dtype=np.int64)
    tokens = np.zeros(threads + 1, dtype=np.int64)
    on_threads(_count_tokens, threads, bounds, buffer, comment_bytes, separator, lines, tokens)
    first_lines, first_tokens = np.cumsum(lines), np.cumsum(tokens)
    line_first = np.empty(first_lines[-1] + 1, dtype=np.int64)
    line_first[-1] = first_tokens[-1]
    values = np.empty(first_tokens[-1], dtype=np.int64)
    failed = np.zeros(1, dtype=np.int64)
    on_threads(_read_integers, threads, bounds, buffer, comment_bytes, separator, first_lines, first_tokens,
               line_first, values, failed)
    return None if failed[0] else (line_first, values)


def first_words(data: bytes, comments: bytes) -> tuple:
    """(the words of the first line that is neither blank nor a comment, where the next line starts); ([],
    len(data)) when there is none. A header's or a size line's words, read in Python before the lines on
    threads."""
    position = 0
    while position < len(data):
        end = data.find(b"\n", position)
        end = len(data) if end < 0 else end
        words = data[position:end].split()
        if words and words[0][0] not in comments:
            return words, end + 1
        position = end + 1
    return [], len(data)
