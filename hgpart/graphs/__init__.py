"""Graph algorithms (clustering, spanning forests, triangles) and their building blocks."""
