"""Every partition, hierarchy, clustering, forest and triangle list of tests/same_results.py is the one
recorded in tests/same_results.json, on the CPU and (gpu marker) on the GPU."""

import pytest

from . import same_results as cases

RECORDED = cases.recorded()


def test_every_case_is_recorded():
    names = [cases.case_name("partition", c) for c in cases.PARTITIONS]
    names += [cases.case_name("twin", c) for c in cases.TWIN_PARTITIONS]
    names += [cases.case_name("coarsen", c) for c in cases.COARSENINGS]
    names += [f"cluster {g}" for g in cases.CLUSTER_GRAPHS]
    names += [f"{what} {g}" for g in cases.GRAPHS for what in ("forest", "triangles")]
    assert sorted(names) == sorted(RECORDED)


@pytest.mark.parametrize("case", cases.PARTITIONS, ids=lambda c: cases.case_name("", c).strip())
def test_partition(case):
    assert cases.partition_case(case) == RECORDED[cases.case_name("partition", case)]


@pytest.mark.parametrize("case", cases.TWIN_PARTITIONS, ids=lambda c: cases.case_name("", c).strip())
def test_cpu_twin_of_the_gpu_path(case):
    assert cases.twin_case(case) == RECORDED[cases.case_name("twin", case)]


@pytest.mark.parametrize("case", cases.COARSENINGS, ids=lambda c: cases.case_name("", c).strip())
def test_coarsening(case):
    assert cases.coarsening_case(case) == RECORDED[cases.case_name("coarsen", case)]


@pytest.mark.parametrize("name", cases.CLUSTER_GRAPHS)
def test_clustering(name):
    assert cases.cluster_case(name) == RECORDED[f"cluster {name}"]


@pytest.mark.parametrize("name", cases.GRAPHS)
def test_forest_and_triangles(name):
    assert cases.forest_case(name) == RECORDED[f"forest {name}"]
    assert cases.triangle_case(name) == RECORDED[f"triangles {name}"]


@pytest.mark.gpu
def test_gpu_results_are_the_recorded_ones():
    """The GPU path's partitions equal the CPU twin's recorded ones; coarsening, clustering, forests and
    triangles on the GPU equal the CPU's recorded ones."""
    wrong = []
    for case in cases.TWIN_PARTITIONS:
        if cases.gpu_partition_case(case) != RECORDED[cases.case_name("twin", case)]:
            wrong.append(cases.case_name("gpu partition", case))
    for case in cases.COARSENINGS:
        if cases.coarsening_case(case, "gpu") != RECORDED[cases.case_name("coarsen", case)]:
            wrong.append(cases.case_name("gpu coarsen", case))
    for name in cases.CLUSTER_GRAPHS:
        if cases.cluster_case(name, "gpu") != RECORDED[f"cluster {name}"]:
            wrong.append(f"gpu cluster {name}")
    for name in cases.GRAPHS:
        if cases.forest_case(name, "gpu") != RECORDED[f"forest {name}"]:
            wrong.append(f"gpu forest {name}")
        if cases.triangle_case(name, "gpu") != RECORDED[f"triangles {name}"]:
            wrong.append(f"gpu triangles {name}")
    assert not wrong
