"""Small helpers shared by every stage (YAML with line marks, hashing, paths)."""
