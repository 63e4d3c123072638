"""Fixtures of the bundle tests; the helpers live in bundle_support."""

from bundle_support import build, demo, key, plan

__all__ = ["build", "demo", "key", "plan"]
