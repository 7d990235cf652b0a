"""Normalizers: records of each input format -> rows of the lake tables."""
