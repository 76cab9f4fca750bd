"""The Python package against the command line: the same runs give the same bytes, errors say where, DataFrames are
tidy, and the README's Python snippets run."""

import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

import gridmarket

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = ROOT / "scenarios" / "quickstart.toml"

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def binary() -> Path:
    """The command line built beside the package: CI's build, else a release build."""
    for profile in ("ci", "release"):
        path = ROOT / "target" / profile / "gridmarket"
        if path.exists():
            return path
    pytest.fail("no gridmarket binary: build it with `cargo build --release`")


def files(folder: Path) -> dict:
    """Every output file of a run but run.json (its timings and command differ), by relative path."""
    return {p.relative_to(folder): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file() and p.name != "run.json"}


def test_a_run_gives_the_bytes_of_the_command_line(tmp_path):
    study = gridmarket.run(QUICKSTART, replications=2, out=tmp_path / "py")
    subprocess.run(
        [binary(), "run", QUICKSTART, "--replications", "2", "--out", tmp_path / "cli", "--quiet"],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    ours, theirs = files(tmp_path / "py"), files(tmp_path / "cli")
    assert ours.keys() == theirs.keys()
    assert [p for p in ours if ours[p] != theirs[p]] == []
    assert study.folder == tmp_path / "py"


def test_the_outputs_are_tidy_dataframes(tmp_path):
    study = gridmarket.run(QUICKSTART, replications=2, out=tmp_path)
    summary = study.summary
    assert list(summary.columns[:2]) == ["point", "label"]
    total = summary[summary.metric == "jobs.total"]
    assert total["mean"].tolist() == [300.0]
    runs = study.runs
    assert sorted(runs.replication.unique()) == [0, 1]
    assert len(runs[runs.metric == "jobs.total"]) == 2
    jobs = study.jobs(point=0, rep=1)
    assert len(jobs) == 300
    assert set(jobs.outcome) <= {"completed", "rejected", "dropped", "running", "pending"}
    assert {"t", "agent", "utilisation", "price"} <= set(study.timeseries(0, 0).columns)
    assert len(study.ledger(0, 0)) > 0
    assert study.checks.verdict.tolist() == ["pass"]
    assert study.failed.empty
    assert "jobs.total" in study.report


def test_a_dict_is_a_scenario_and_overrides_apply(tmp_path):
    table = tomllib.loads(QUICKSTART.read_text())
    from_dict = gridmarket.run(table, replications=1, out=tmp_path / "dict")
    from_file = gridmarket.run(QUICKSTART, replications=1, out=tmp_path / "file")
    pd.testing.assert_frame_equal(from_dict.summary, from_file.summary)
    assert not list(Path.cwd().glob(".gridmarket-*.toml")), "the dict's file is removed"
    # `set` and `seed` as the command line's --set and --seed.
    dearer = gridmarket.run(QUICKSTART, replications=1, seed=8, set={"providers.fast.price": 0.5}, out=tmp_path / "s")
    price = dearer.summary.set_index("metric").loc["providers.fast.price", "mean"]
    assert price == 0.5


def test_a_refused_scenario_raises_with_its_place(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text(QUICKSTART.read_text().replace("speed = 2.0", "speed = -2.0"))
    with pytest.raises(gridmarket.ScenarioError) as raised:
        gridmarket.validate(bad)
    error = raised.value
    assert error.file == str(bad)
    assert error.key == "providers.fast.speed"
    assert error.line == QUICKSTART.read_text().splitlines().index("speed = 2.0") + 1
    assert "providers.fast.speed" in str(error)
    assert gridmarket.validate(QUICKSTART) is None
    with pytest.raises(gridmarket.ScenarioError, match="gian"):
        gridmarket.run({**tomllib.loads(QUICKSTART.read_text()), "gian": 1}, out=tmp_path / "x")
    with pytest.raises(gridmarket.GridmarketError, match="unexpected argument"):
        gridmarket._command(["run", QUICKSTART, "--no-such-flag"])


def test_a_family_is_reproduced(tmp_path):
    studies = gridmarket.reproduce("queueing", quick=True, out=tmp_path, scenarios=ROOT / "scenarios")
    assert studies and all(isinstance(s, gridmarket.Study) for s in studies.values())
    assert (tmp_path / "report.md").exists()
    for study in studies.values():
        assert not study.summary.empty


def test_ctrl_c_stops_the_runs_and_raises_keyboard_interrupt(tmp_path):
    # Chapter 4 of Salehi's thesis at full size: two-day workloads whose runs take minutes each.
    scenario = ROOT / "scenarios" / "salehi-ch4" / "duration.toml"
    script = (
        "import signal, sys, gridmarket\n"
        "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
        "try:\n"
        f"    gridmarket.run({str(scenario)!r}, out={str(tmp_path / 'out')!r})\n"
        "except KeyboardInterrupt:\n"
        "    print('KeyboardInterrupt')\n"
    )
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for _ in range(600):
        if (tmp_path / "out" / "p0").exists() or child.poll() is not None:
            break
        time.sleep(0.05)
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=120)
    assert out.splitlines()[-1:] == ["KeyboardInterrupt"], (out[-500:], err[-500:])
    assert "interrupted" in err


def test_the_readme_python_snippets_run(tmp_path, monkeypatch):
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## From Python", 1)[1].split("\n## ", 1)[0]
    snippets = re.findall(r"```python\n(.*?)```", section, re.S)
    assert snippets, "the README's From Python section has Python snippets"
    monkeypatch.chdir(ROOT)
    namespace = {}
    for snippet in snippets:
        exec(compile(snippet, "README.md", "exec"), namespace)
