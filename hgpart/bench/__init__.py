"""``hgpart bench``: hgpart and its peers side by side on the same inputs, medians over repeats."""


def log_row(reporter, name: str, row: dict) -> None:
    """One measured row as a log line on stderr (floats to 4 significant digits, missing values left out)."""
    if reporter:
        reporter.log(f"{name}: " + ", ".join(f"{key} {value:.4g}" if isinstance(value, float) else f"{key} {value}"
                                             for key, value in row.items()
                                             if key != "instance" and value is not None and not isinstance(value, dict)))
