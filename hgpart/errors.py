"""Errors that reach the user as one line: ``Error: FILE:LINE: message``."""

from __future__ import annotations


class InputError(ValueError):
    """Malformed input file or argument.

    Parameters
    ----------
    message : str
        What is wrong, in words a user understands.
    file : str, optional
        The file (``-`` for stdin); omitted for pure argument errors.
    line : int, optional
        1-based line number in ``file``; 0 or None when the error is about the file as a whole.
    """

    def __init__(self, message: str, file: str | None = None, line: int | None = None):
        self.message = message
        self.file = file
        self.line = line
        super().__init__(self.format())

    def format(self) -> str:
        where = ""
        if self.file is not None:
            where = f"{self.file}:{self.line}: " if self.line else f"{self.file}: "
        return f"{where}{self.message}"

    def located(self, file: str) -> "InputError":
        """The same error with ``file`` filled in (readers learn the name late)."""
        return InputError(self.message, file if self.file is None else self.file, self.line)


class DeviceError(RuntimeError):
    """The requested device cannot run the job (no GPU, not enough memory, feature missing)."""


class DeviceMemoryError(DeviceError):
    """The GPU has too little memory for the job (``--device auto`` then runs it on the CPU)."""


class InfeasibleError(RuntimeError):
    """No partition satisfying the balance constraint could be produced."""
