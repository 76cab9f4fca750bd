"""gridmarket from Python: run scenarios of the simulator and read their results as pandas DataFrames.

The engine is gridmarket's own (Rust); this package runs its command line in-process, on a thread that Ctrl-C stops,
and reads the files a run writes (docs/outputs.md) into DataFrames:

    import gridmarket
    study = gridmarket.run("scenarios/quickstart.toml", replications=2)
    study.summary            # one row per sweep point and metric: mean, std, 95% CI
    study.jobs(point=0, rep=0)

A run gives the same bytes as `gridmarket run` with the same scenario and seed.
"""

from __future__ import annotations

import json
import os
import tempfile
from functools import cached_property
from pathlib import Path
from typing import Any, Mapping, Optional, Union

import pandas as pd

from . import _gridmarket

__version__ = _gridmarket.__version__
__all__ = ["run", "validate", "reproduce", "Study", "GridmarketError", "ScenarioError"]

Scenario = Union[str, "os.PathLike[str]", Mapping[str, Any]]


class GridmarketError(Exception):
    """A command of gridmarket failed; the message is the command line's."""


class ScenarioError(GridmarketError):
    """A scenario refused: the file, the line and column, the key path, what was expected and found, and a hint."""

    def __init__(self, text: str, *, file=None, line=None, column=None, key=None, message=None, hint=None):
        super().__init__(text)
        self.file = file
        self.line = line
        self.column = column
        self.key = key
        self.message = message
        self.hint = hint


def _command(args: list) -> int:
    code, error = _gridmarket.command([str(a) for a in args])
    if error is not None:
        text = error.pop("text")
        if error.pop("kind") == "scenario":
            raise ScenarioError(text, **error)
        raise GridmarketError(text)
    return code


class _ScenarioFile:
    """A scenario as a file: a path as it is, a dict written as TOML in the current folder (where its relative paths
    point from), removed afterwards."""

    def __init__(self, scenario: Scenario):
        self._written = None
        if isinstance(scenario, Mapping):
            text = _gridmarket.scenario_toml(json.dumps(scenario))
            fd, name = tempfile.mkstemp(prefix=".gridmarket-", suffix=".toml", dir=os.getcwd())
            with os.fdopen(fd, "w") as f:
                f.write(text)
            self._written = self.path = Path(name)
        else:
            self.path = Path(scenario)

    def __enter__(self) -> Path:
        return self.path

    def __exit__(self, *_):
        if self._written is not None:
            self._written.unlink(missing_ok=True)


def _overrides(seed, replications, set) -> list:
    args = []
    if seed is not None:
        args += ["--seed", seed]
    if replications is not None:
        args += ["--replications", replications]
    for key, value in (set or {}).items():
        args += ["--set", f"{key}={_toml_value(value)}"]
    return args


def _folder(out) -> Path:
    """The output folder: `out`, or a new temporary folder left for the caller."""
    return Path(out) if out is not None else Path(tempfile.mkdtemp(prefix="gridmarket-"))


def _run_flags(quick: bool, jobs, progress: bool) -> list:
    """The flags `run` and `reproduce` share."""
    flags = ["--quick"] if quick else []
    flags += ["--jobs", jobs] if jobs is not None else []
    return flags + ([] if progress else ["--quiet"])


def _toml_value(value) -> str:
    """`value` as `--set` reads it: TOML, with a bare word taken as a string."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    return _gridmarket.scenario_toml(json.dumps({"v": value})).split("=", 1)[1].strip()


class Study:
    """The outputs of one scenario's runs, in `folder` (docs/outputs.md), read as DataFrames when first asked for."""

    def __init__(self, folder: Union[str, "os.PathLike[str]"]):
        self.folder = Path(folder)

    def __repr__(self) -> str:
        return f"Study({str(self.folder)!r})"

    def _csv(self, *parts) -> pd.DataFrame:
        return pd.read_csv(self.folder.joinpath(*parts), keep_default_na=False, na_values=[""])

    @cached_property
    def summary(self) -> pd.DataFrame:
        """One row per sweep point and metric: n, mean, std, ci95, lo, hi (summary.csv)."""
        return self._csv("summary.csv")

    @cached_property
    def runs(self) -> pd.DataFrame:
        """One row per sweep point, replication and metric, with the run's seed (runs.csv)."""
        return self._csv("runs.csv")

    @cached_property
    def points(self) -> pd.DataFrame:
        """The sweep points: their label and the value of every swept key (points.csv)."""
        return self._csv("points.csv")

    @cached_property
    def verdicts(self) -> pd.DataFrame:
        """The targets ([[expect]]) with what was measured and their verdict (expectations.csv); empty if none."""
        return self._optional_csv("expectations.csv")

    @cached_property
    def checks(self) -> pd.DataFrame:
        """The sanity checks ([[check]]) with what was measured and their verdict (checks.csv); empty if none."""
        return self._optional_csv("checks.csv")

    @property
    def failed(self) -> pd.DataFrame:
        """The targets and sanity checks that failed: a row each, with its verdict (empty: none failed)."""
        claims = {"target": "claim", "check": "claim"}
        judged = [f.rename(columns=claims) for f in (self.verdicts, self.checks) if not f.empty]
        if not judged:
            return pd.DataFrame(columns=["claim", "measured", "verdict"])
        rows = pd.concat([j[["claim", "measured", "verdict"]] for j in judged], ignore_index=True)
        return rows[rows["verdict"].astype(str).str.startswith("FAIL")].reset_index(drop=True)

    def _optional_csv(self, name: str) -> pd.DataFrame:
        return self._csv(name) if (self.folder / name).exists() else pd.DataFrame()

    def jobs(self, point: int = 0, rep: int = 0) -> pd.DataFrame:
        """Every job of one run: submit, start, end, site, outcome, cost... (p<point>/r<rep>/jobs.csv)."""
        return self._csv(f"p{point}", f"r{rep}", "jobs.csv")

    def timeseries(self, point: int = 0, rep: int = 0) -> pd.DataFrame:
        """Each provider sampled over one run: busy PEs, utilisation, queue, price (p<point>/r<rep>/timeseries.csv)."""
        return self._csv(f"p{point}", f"r{rep}", "timeseries.csv")

    def ledger(self, point: int = 0, rep: int = 0) -> pd.DataFrame:
        """Every transfer of money of one run (p<point>/r<rep>/ledger.csv)."""
        return self._csv(f"p{point}", f"r{rep}", "ledger.csv")

    @property
    def report(self) -> str:
        """report.md: the verdicts, the summary table and the charts' names."""
        return (self.folder / "report.md").read_text()


def run(
    scenario: Scenario,
    *,
    seed: Optional[int] = None,
    replications: Optional[int] = None,
    set: Optional[Mapping[str, Any]] = None,
    out: Optional[Union[str, "os.PathLike[str]"]] = None,
    quick: bool = False,
    jobs: Optional[int] = None,
    progress: bool = False,
) -> Study:
    """Runs every sweep point and replication of `scenario` (a file's path, or a dict of its tables) and returns its
    outputs. `seed`, `replications` and `set` (key path to value) override the scenario's, as the command line's
    flags do; `out` is the output folder (default: a new temporary folder, left for the caller); `quick` applies the
    scenario's [quick] overrides; `jobs` bounds the parallel runs; `progress` shows the progress bar on stderr.

    Raises ScenarioError for a refused scenario (file, line, key path), KeyboardInterrupt on Ctrl-C once the runs
    have stopped. A failed target does not raise: see `Study.failed` and `Study.verdicts`.
    """
    folder = _folder(out)
    with _ScenarioFile(scenario) as path:
        overrides = _overrides(seed, replications, set)
        _command(["run", path, "--out", folder, *overrides, *_run_flags(quick, jobs, progress)])
    return Study(folder)


def validate(
    scenario: Scenario,
    *,
    seed: Optional[int] = None,
    replications: Optional[int] = None,
    set: Optional[Mapping[str, Any]] = None,
) -> None:
    """Checks `scenario` without running it: returns None, or raises ScenarioError saying where and what."""
    with _ScenarioFile(scenario) as path:
        _command(["validate", path, *_overrides(seed, replications, set)])


def reproduce(
    family: str,
    *,
    quick: bool = False,
    out: Optional[Union[str, "os.PathLike[str]"]] = None,
    scenarios: Union[str, "os.PathLike[str]"] = "scenarios",
    jobs: Optional[int] = None,
    progress: bool = False,
) -> dict:
    """Runs a family of scenarios (`scenarios/<family>/*.toml`, relative to the current folder unless `scenarios`
    says otherwise) and judges its targets: a Study per scenario, by name. The family's report is `out`/report.md."""
    folder = _folder(out)
    _command(["reproduce", family, "--out", folder, "--scenarios", scenarios, *_run_flags(quick, jobs, progress)])
    return {p.name: Study(p) for p in sorted(folder.iterdir()) if (p / "summary.csv").exists()}
