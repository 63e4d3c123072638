"""Every record says what answered the agent: a dry run is prepared against the scripted
model and labelled `dry_run`, a scripted scenario `scripted`, anything else `real`."""

from __future__ import annotations

from pathlib import Path

from copeca_action._util.paths import corpus_dir
from copeca_action.pipeline import model_endpoint, prepare_scenario

DEMO = corpus_dir() / "scenarios" / "demo.yaml"


def test_dry_run_switches_to_the_scripted_model_and_labels_it(tmp_path: Path) -> None:
    vendor = tmp_path / "vendor.yaml"
    text = DEMO.read_text()
    assert "model_endpoint: scripted" in text
    vendor.write_text("\n".join(line for line in text.replace(
        "model_endpoint: scripted", "model_endpoint: vendor").splitlines()
        if not line.startswith("scripts:")) + "\n")
    prep = prepare_scenario(vendor, out=tmp_path / "out", cache=tmp_path / "cache",
                            corpus=corpus_dir(), dry_run=True)
    assert prep.cfg.scenario.model_endpoint == "scripted"
    assert prep.cfg.endpoint_kind == "dry_run"
    with model_endpoint(prep) as url:
        assert url is not None and prep.cfg.endpoint_kind == "dry_run"
    assert prep.cfg.endpoint_kind == "dry_run"


def test_a_scripted_scenario_is_scripted_while_its_server_answers(tmp_path: Path) -> None:
    prep = prepare_scenario(DEMO, out=tmp_path / "out", cache=tmp_path / "cache")
    assert prep.cfg.scenario.model_endpoint == "scripted"
    assert prep.cfg.endpoint_kind == "real"
    with model_endpoint(prep):
        assert prep.cfg.endpoint_kind == "scripted"
    assert prep.cfg.endpoint_kind == "real"


def test_a_custom_base_url_is_real(tmp_path: Path) -> None:
    prep = prepare_scenario(DEMO, out=tmp_path / "out", cache=tmp_path / "cache",
                            base_url="http://127.0.0.1:9/v1")
    with model_endpoint(prep):
        assert prep.cfg.endpoint_kind == "real"
