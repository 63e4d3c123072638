"""The HTML pages' Jinja environment (autoescaped, strict, with the number filters) and
their static assets, shared by report.html and history.html."""

from __future__ import annotations

import re
from functools import cache
from importlib import resources

import jinja2

from copeca_action._util.percent import level_text, threshold_text
from copeca_action.render._markdown import interval_text, pct, share, usd

TEMPLATES = "templates"
_BIDI = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
"""Bidirectional marks, embeddings, overrides and isolates: in a task id or arm name, U+202E
shows the rest of its line (a tooltip's numbers, a warning) right to left, `$1.68` as `86.1$`."""


def without_bidi(page: str) -> str:
    """A finished page without bidi controls; our templates use none, so only text a record,
    task or scenario supplied loses them."""
    return _BIDI.sub("", page)


@cache
def environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.PackageLoader("copeca_action.render", TEMPLATES),
                             autoescape=True, undefined=jinja2.StrictUndefined,
                             trim_blocks=True, lstrip_blocks=True)
    env.filters["usd"] = usd
    env.filters["pct"] = pct
    env.filters["share"] = share
    env.filters["interval"] = interval_text
    env.filters["threshold"] = threshold_text
    env.filters["level"] = level_text
    return env


@cache
def asset(name: str) -> str:
    """A file of the templates folder (CSS, JS) as text."""
    return (resources.files("copeca_action.render") / TEMPLATES / name).read_text("utf-8")
