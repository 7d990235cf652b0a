"""The Dagster definitions: load with no environment, the asset graph as pinned, and a
materialization in-process into a temporary home."""

from pathlib import Path

import dagster as dg
import pytest

from pipelines.definitions import defs
from pipelines.resources import RunlakeResource
from transforms import warehouse
from transforms.schemas import TABLES


def test_definitions_load_and_graph_is_pinned(monkeypatch: pytest.MonkeyPatch) -> None:
    """The asset keys and their dependencies are exactly these."""
    for var in ("RUNLAKE_HOME", "RUNLAKE_LANDING", "RUNLAKE_WORKERS"):
        monkeypatch.delenv(var, raising=False)
    graph = defs.resolve_asset_graph()
    keys = sorted(k.to_user_string() for k in graph.get_all_asset_keys())
    assert keys == sorted([*TABLES, "warehouse_views"])
    deps = graph.get(dg.AssetKey("warehouse_views")).parent_keys
    assert sorted(k.to_user_string() for k in deps) == sorted(TABLES)


def test_materialize_samples_in_process(tmp_path: Path) -> None:
    """Materializing every asset fills the lake and the views, with row counts as metadata."""
    landing = tmp_path / "landing" / "2026-11-20"
    landing.mkdir(parents=True)
    (landing / "a.responses.jsonl").write_text(
        '{"run_id": "r1", "agent": "a", "outcome": {"status": "passed"}, '
        '"response": {"final_response": "ok", "messages": [{"role": "assistant", '
        '"content": "ok"}]}}\nnot json\n')
    home = tmp_path / "home"
    result = dg.materialize(
        list(defs.assets or []),  # type: ignore[arg-type]
        resources={"runlake": RunlakeResource(home=str(home), landing=str(tmp_path / "landing"))},
        instance=dg.DagsterInstance.ephemeral())
    assert result.success
    meta = {m.asset_key.to_user_string(): m.metadata
            for m in result.get_asset_materialization_events()
            for m in [m.materialization]}
    assert meta["runs"]["rows_ingested"].value == 1
    assert meta["quarantine"]["quarantine/invalid_json"].value == 1
    con = warehouse.connect(home)
    assert con.execute("SELECT run_id, status FROM runs").fetchall() == [("r1", "passed")]
    con.close()
