"""``hgpart bench``: hgpart and its peers side by side on the same inputs, medians over repeats."""
