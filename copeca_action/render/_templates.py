"""The HTML pages' Jinja environment (autoescaped, strict, with the number filters) and
their static assets, shared by report.html and history.html."""

from __future__ import annotations

from functools import cache
from importlib import resources

import jinja2

from copeca_action.render._markdown import interval_text, pct, share, usd

TEMPLATES = "templates"


@cache
def environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.PackageLoader("copeca_action.render", TEMPLATES),
                             autoescape=True, undefined=jinja2.StrictUndefined,
                             trim_blocks=True, lstrip_blocks=True)
    env.filters["usd"] = usd
    env.filters["pct"] = pct
    env.filters["share"] = share
    env.filters["interval"] = interval_text
    return env


@cache
def asset(name: str) -> str:
    """A file of the templates folder (CSS, JS) as text."""
    return (resources.files("copeca_action.render") / TEMPLATES / name).read_text("utf-8")
