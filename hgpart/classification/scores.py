"""How well found classes agree with known labels: accuracy under the best matching of classes to labels
(Hungarian method), normalized mutual information and the adjusted Rand index, all from the contingency table.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError


def contingency(labels: np.ndarray, classes: np.ndarray) -> np.ndarray:
    """int64[number of labels, number of classes]: how many samples carry each (label, class) pair (values
    relabelled to 0.. in sorted order, so any integers may be labels)."""
    labels, classes = np.asarray(labels), np.asarray(classes)
    if labels.shape != classes.shape or labels.ndim != 1:
        raise InputError(f"labels and classes must be two 1-D arrays of one length, got shapes {labels.shape} and "
                         f"{classes.shape}")
    _, label_ids = np.unique(labels, return_inverse=True)
    _, class_ids = np.unique(classes, return_inverse=True)
    table = np.zeros((label_ids.max(initial=-1) + 1, class_ids.max(initial=-1) + 1), dtype=np.int64)
    np.add.at(table, (label_ids, class_ids), 1)
    return table


def matched_accuracy(labels, classes) -> float:
    """The share of samples whose class maps to their label under the one-to-one map of classes to labels that
    maximises it (scipy's ``linear_sum_assignment``; classes left over by a map count as wrong)."""
    from scipy.optimize import linear_sum_assignment

    table = contingency(labels, classes)
    if table.size == 0:
        return 1.0
    rows, columns = linear_sum_assignment(table, maximize=True)
    return float(table[rows, columns].sum() / table.sum())


def normalized_mutual_information(labels, classes) -> float:
    """I(labels; classes) / ((H(labels) + H(classes)) / 2), the arithmetic normalisation (scikit-learn's
    default); 1 when both are a single group."""
    table = contingency(labels, classes).astype(np.float64)
    total = table.sum()
    if total == 0:
        return 1.0
    row, column = table.sum(axis=1) / total, table.sum(axis=0) / total
    joint = table / total
    nonzero = joint > 0
    mutual = float(np.sum(joint[nonzero] * np.log(joint[nonzero] / np.outer(row, column)[nonzero])))
    entropies = -float(np.sum(row * np.log(row))) - float(np.sum(column * np.log(column)))
    if entropies == 0.0:
        return 1.0  # one label and one class: identical groupings
    return max(0.0, 2.0 * mutual / entropies)


def adjusted_rand_index(labels, classes) -> float:
    """The Rand index of the two groupings corrected for chance (Hubert and Arabie 1985): 1 for identical
    groupings, about 0 for independent ones."""
    table = contingency(labels, classes).astype(np.float64)
    total = table.sum()

    def pairs(counts):
        return float(np.sum(counts * (counts - 1) / 2.0))

    index = pairs(table)
    row_pairs, column_pairs = pairs(table.sum(axis=1)), pairs(table.sum(axis=0))
    all_pairs = total * (total - 1) / 2.0
    expected = row_pairs * column_pairs / all_pairs if all_pairs else 0.0
    maximum = (row_pairs + column_pairs) / 2.0
    if maximum == expected:
        return 1.0
    return float((index - expected) / (maximum - expected))


def scores(labels, classes) -> dict:
    """``accuracy``, ``nmi`` and ``ari`` of ``classes`` against ``labels``."""
    return {"accuracy": matched_accuracy(labels, classes), "nmi": normalized_mutual_information(labels, classes),
            "ari": adjusted_rand_index(labels, classes)}
