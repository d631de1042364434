"""Unsupervised classification by hypergraph partitioning (L. Cheng, H. Cho and P. Yoon, "An Accelerated
Procedure for Hypergraph Coarsening on the GPU", Sec. VII; Huang et al., IEEE TPAMI 2011): samples, their
nearest neighbours, a net per sample.

- :mod:`.neighbors`: exact k nearest neighbours on the host.
"""
