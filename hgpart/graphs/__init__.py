"""Graph algorithms, each family a subpackage with its driver, its host (njit) and GPU (numba.cuda) steps side
by side, and the helpers both use:

- :mod:`.clustering`: modularity clustering (``hgpart cluster``);
- :mod:`.spanning_forest`: minimum spanning forests by Borůvka (``hgpart mst``);
- :mod:`.triangles`: triangle counting and listing, clustering coefficients (``hgpart triangles``);
- :mod:`.modularity`: the modularity of a clustering and the clustering's integer levels;
"""
