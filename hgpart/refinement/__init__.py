"""Refinement (Cheng, Cho and Yoon 2015, Fig. 2 line 9): label propagation, k-way FM with rollback, rebalancing."""

from .refiner import refine, rebalance_partition

__all__ = ["refine", "rebalance_partition"]
