from __future__ import annotations

import copeca_action.github as gh


def test_all_is_sorted_complete_and_importable() -> None:
    def order(name: str) -> tuple[int, str]:  # constants, then classes, then functions
        return (0 if name.isupper() else 1 if name[0].isupper() else 2, name)

    assert list(gh.__all__) == sorted(gh.__all__, key=order)
    for name in gh.__all__:
        assert hasattr(gh, name), name
    public = {n for n in vars(gh) if not n.startswith("_")} - {"annotations"}
    assert public - set(gh.__all__) == set()
