"""Landing days (folder, name, modification time) and the data checks against their limits."""

import os
from collections.abc import Callable
from datetime import UTC, date, datetime
from pathlib import Path

from transforms import warehouse
from transforms.ingest import ingest
from transforms.read.landing import files_by_day, landing_day
from transforms.settings import Settings
from transforms.warehouse import checks


def test_landing_day_from_folder_name_then_mtime(tmp_path: Path) -> None:
    dated = tmp_path / "landing" / "2026-11-20" / "deep" / "a.responses.jsonl"
    named = tmp_path / "landing" / "nightly-2026-11-19.spans.jsonl"
    loose = tmp_path / "landing" / "b.responses.jsonl"
    for p in (dated, named, loose):
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("{}\n")
    when = datetime(2026, 11, 18, 23, 30, tzinfo=UTC).timestamp()
    os.utime(loose, (when, when))
    assert landing_day(dated) == date(2026, 11, 20)
    assert landing_day(named) == date(2026, 11, 19)
    assert landing_day(loose) == date(2026, 11, 18)
    by_day = files_by_day(tmp_path / "landing")
    assert {d: [f.path.name for f in fs] for d, fs in by_day.items()} == {
        date(2026, 11, 18): ["b.responses.jsonl"],
        date(2026, 11, 19): ["nightly-2026-11-19.spans.jsonl"],
        date(2026, 11, 20): ["a.responses.jsonl"]}
    assert files_by_day(tmp_path / "nowhere") == {}


def test_checks_measure_against_their_limits(write_lines: Callable[..., Path],
                                             home: Path) -> None:
    """Two of four lines quarantined: over a 5% limit; one run of two broke the strict
    contract: over 10%; a run's newest day 3 days ago is stale at 36 h."""
    day = "2026-11-20"
    ok = {"run_id": "r1", "agent": "a", "started_at": f"{day}T10:00:00Z",
          "outcome": {"status": "passed"},
          "response": {"final_response": "ok", "messages": [{"role": "assistant",
                                                             "content": "ok"}]}}
    strict = {**ok, "run_id": "r2", "contract_mode": "strict",
              "response": {"final_response": "", "messages": []}}
    path = write_lines([ok, strict, "not json", b"\xff\xfe"], folder=f"landing/{day}")
    ingest([path], home)
    con = warehouse.live(home)
    try:
        s = Settings()
        outcomes = {o.name: o for o in checks.run_all(
            con, date(2026, 11, 20), s, now=datetime(2026, 11, 24, 12, tzinfo=UTC))}
    finally:
        con.close()
    assert outcomes["lines_accounted_for"].passed
    q = outcomes["quarantine_share_below_limit"]
    assert not q.passed and q.metadata["quarantine_share"] == 0.5
    c = outcomes["contract_violation_rate_below_limit"]
    assert (c.metadata["runs"], c.metadata["runs_violating"], c.passed) == (2, 1, False)
    f = outcomes["latest_day_is_fresh"]
    assert not f.passed and f.metadata["age_hours"] == 84.0
    # 84.0 = from the end of 2026-11-20 (21st 00:00) to 2026-11-24 12:00: 3.5 days.
    # An older day's partition (a backfill) passes, naming the newest day: one warning, not
    # one per backfilled day.
    con = warehouse.live(home)
    try:
        older = {o.name: o for o in checks.run_all(
            con, date(2026, 11, 19), s, now=datetime(2026, 11, 24, 12, tzinfo=UTC))}
    finally:
        con.close()
    o = older["latest_day_is_fresh"]
    assert o.passed and "not the newest day with runs (2026-11-20)" in o.summary
    assert outcomes["truncation_rate_below_limit"].passed


def test_freshness_is_judged_on_the_newest_landing_day_in_the_same_words(
        write_lines: Callable[..., Path], home: Path) -> None:
    """Days ingested oldest first into an empty lake are each the lake's newest when their turn
    comes: with a newer day in the landing folder, an older day's partition passes, naming the
    landing's newest day, so a first `make run` warns as often as the next one. The newest
    day's warning says the same words when the same lake is checked again later that day."""
    run = {"run_id": "r1", "agent": "a", "started_at": "2026-11-19T10:00:00Z",
           "outcome": {"status": "passed"},
           "response": {"final_response": "ok", "messages": [{"role": "assistant",
                                                              "content": "ok"}]}}
    ingest([write_lines([run], folder="landing/2026-11-19")], home)
    s = Settings()
    con = warehouse.live(home)
    try:
        def fresh(day: date, now: datetime, newest: date | None) -> checks.CheckOutcome:
            [f] = [o for o in checks.run_all(con, day, s, now=now, newest_landing_day=newest)
                   if o.name == "latest_day_is_fresh"]
            return f

        first = fresh(date(2026, 11, 19), datetime(2026, 12, 1, 9, tzinfo=UTC),
                      date(2026, 11, 20))
        assert first.passed, first.summary
        assert first.summary == ("2026-11-19 is not the newest day in the landing folder "
                                 "(2026-11-20): freshness is checked on the newest day")
        assert first.metadata["latest_day"] == "2026-11-20"
        # Without a newer landing day the lake's newest day is judged: 11 days and 9 h after
        # the end of 2026-11-19, said in whole days, the same an hour later.
        said = {fresh(date(2026, 11, 19), datetime(2026, 12, 1, hour, tzinfo=UTC),
                      date(2026, 11, 19)).summary for hour in (9, 10)}
        assert said == {"newest day 2026-11-19 ended 11 days ago (limit 36 h)"}
        stale = fresh(date(2026, 11, 19), datetime(2026, 12, 1, 9, tzinfo=UTC), None)
        assert not stale.passed and stale.metadata["age_hours"] == 273.0
        # Under two days, in hours.
        assert fresh(date(2026, 11, 19), datetime(2026, 11, 21, 6, tzinfo=UTC),
                     None).summary == "newest day 2026-11-19 ended 30.0 h ago (limit 36 h)"
    finally:
        con.close()
