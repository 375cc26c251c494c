"""Typed results: each wraps a command's JSON answer, which ``to_dict()`` returns unchanged."""

from __future__ import annotations

import copy
from typing import Any, Optional


def _frame(rows: list[dict]):
    """A pandas DataFrame of `rows`."""
    import pandas

    return pandas.DataFrame(rows)


class Result:
    """A command's answer: ``to_dict()`` is its JSON, and its keys read as items (``result["best"]``)."""

    def __init__(self, answer: dict):
        self._answer = answer

    def to_dict(self) -> dict:
        """The answer as the command line's JSON gives it (a copy)."""
        return copy.deepcopy(self._answer)

    def __getitem__(self, key: str) -> Any:
        return self._answer[key]

    def __contains__(self, key: str) -> bool:
        return key in self._answer

    def keys(self):
        return self._answer.keys()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(self._answer.keys())})"


class Prediction(Result):
    """``phaze predict``'s answer: one configuration's iteration time, throughput and memory."""

    @property
    def iteration_time_s(self) -> float:
        """Seconds per training iteration."""
        return self._answer["iteration_time_s"]


class PlanResult(Result):
    """``phaze plan``'s answer: the fastest configurations, best first."""

    @property
    def plans(self):
        """The ranked configurations as a DataFrame, one row each."""
        return _frame([_flat(p) for p in self._answer.get("best", [])])


class Validation(Result):
    """``phaze validate``'s answer: predicted against measured, per row."""

    @property
    def rows(self):
        """One row per run or kernel as a DataFrame."""
        for key in ("runs", "kernels"):
            if key in self._answer:
                return _frame([_flat(r) for r in self._answer[key]])
        return _frame([])


class SearchResult(Result):
    """``phaze search``'s answer: the best point, the top list, each model's best, the baselines."""

    def __init__(self, answer: dict, stats: Optional[dict] = None):
        super().__init__(answer)
        self.stats = dict(stats or {})  #: points evaluated, resumed and left out; seconds taken

    @property
    def best(self) -> Optional[dict]:
        """The best point: its design, micro-batch, recomputation and each model's plan (None: none fits)."""
        return self._answer["best"]

    @property
    def score(self) -> Optional[float]:
        """The best point's average samples/s over the models."""
        best = self._answer["best"]
        return best["average_samples_per_s"] if best else None

    @property
    def top(self):
        """The top list as a DataFrame: one row per design, best first."""
        return _frame([_point_row(p) for p in self._answer["top"]])

    @property
    def pareto(self):
        """The Pareto frontiers as a DataFrame (one row per point and frontier), when asked for."""
        rows = []
        for frontier in self._answer.get("pareto", []):
            for p in frontier["points"]:
                rows.append({"frontier": frontier["frontier"], **_flat(p)})
        return _frame(rows)


def _flat(value: dict, prefix: str = "") -> dict:
    """Nested dicts flattened to one level, keys joined by '.', lists kept as they are."""
    out = {}
    for key, v in value.items():
        name = prefix + key
        if isinstance(v, dict):
            out.update(_flat(v, name + "."))
        else:
            out[name] = v
    return out


def _point_row(point: dict) -> dict:
    """A search point as a table row: its design, micro-batch, recomputation and score."""
    row = {f"design.{k}": v for k, v in point["design"].items()}
    for key in ("micro_batch", "recompute", "average_samples_per_s"):
        if key in point:
            row[key] = point[key]
    return row
