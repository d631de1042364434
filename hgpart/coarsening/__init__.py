"""Coarsening (Cheng, Cho and Yoon 2015, Fig. 2 lines 5-6): rate -> match -> contract, level by level."""

from .coarsener import Hierarchy, Level, coarsen

__all__ = ["Hierarchy", "Level", "coarsen"]
