"""Attribute docstrings become field descriptions when a schema is generated (as pydantic's
use_attribute_docstrings gave them, without its cost at every start)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from copeca_action._util.docstrings import describe_fields


class Inner(BaseModel):
    depth: int = 0
    """How deep it goes.

        Indented continuation."""


class Base(BaseModel):
    name: str = ""
    """The name."""
    kept: int = Field(0, description="given explicitly")
    """Not used: an explicit description wins."""
    plain: int = 0


class Child(Base):
    inner: Inner | None = None
    """What is inside."""
    items: list[Inner] = []
    plain: int = 1


def test_descriptions_come_from_the_docstrings_under_each_field() -> None:
    describe_fields([Child])
    schema = Child.model_json_schema()
    props = schema["properties"]
    assert props["name"]["description"] == "The name."  # inherited from Base
    assert props["kept"]["description"] == "given explicitly"
    assert "description" not in props["plain"]  # redefined in Child without a docstring
    assert props["inner"]["description"] == "What is inside."
    nested = schema["$defs"]["Inner"]["properties"]["depth"]["description"]
    assert nested == "How deep it goes.\n\nIndented continuation."
    assert Inner.model_fields["depth"].description == nested


def test_describing_twice_changes_nothing() -> None:
    describe_fields([Child])
    first = Child.model_json_schema()
    describe_fields([Child, Inner])
    assert Child.model_json_schema() == first
