"""The commands: keyword arguments become the command line's options, run in process by the C++ library."""

from __future__ import annotations

import json
import os
import tempfile
from typing import Any, Callable, Mapping, Optional, Sequence

from . import _phaze
from ._phaze import InputError
from ._results import PlanResult, Prediction, Result, SearchResult, Validation

ProgressCallback = Callable[[int, int, str], Any]


class _Files:
    """Temporary JSON files for dict arguments (a model's config.json, a system, a question), removed on exit."""

    def __init__(self):
        self.paths: list[str] = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for path in self.paths:
            os.unlink(path)

    def path_of(self, value: Mapping[str, Any]) -> str:
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            json.dump(value, f)
        self.paths.append(f.name)
        return f.name


def _value(value: Any, files: _Files) -> str:
    """One option value: a dict becomes the path of a JSON file holding it."""
    return files.path_of(value) if isinstance(value, Mapping) else str(value)


def _option_args(options: Mapping[str, Any], files: _Files) -> list[str]:
    """``--name value`` pairs of keyword arguments: underscores become dashes, a list a comma-separated value
    (``model`` is repeated instead, as the search takes several), a dict a JSON file (a model's Hugging Face
    config, a system), ``True`` a flag, ``False`` and ``None`` nothing."""
    args: list[str] = []
    for key, value in options.items():
        flag = "--" + key.replace("_", "-")
        if value is None or value is False:
            continue
        if value is True:
            args.append(flag)
        elif key == "model" and isinstance(value, (list, tuple)):
            for one in value:
                args += [flag, _value(one, files)]
        elif isinstance(value, (list, tuple)):
            args += [flag, ",".join(str(v) for v in value)]
        else:
            args += [flag, _value(value, files)]
    return args


def _run(args: Sequence[str]) -> str:
    """Runs ``phaze ARGS...``; returns its standard output, raises InputError on bad input."""
    status, out, err = _phaze.run_command([str(a) for a in args])
    if status == 0:
        return out
    message = err.strip().splitlines()[-1] if err.strip() else f"exit status {status}"
    message = message.removeprefix("phaze: error: ")
    if status == 2:
        raise InputError(message)
    raise RuntimeError(message)



def command(*args: str) -> dict:
    """Runs any phaze command with ``--json`` and returns its JSON answer, e.g. ``command("arch", "list")``."""
    return json.loads(_run([*args, "--json"]))


def predict(megatron_args: Optional[Sequence[str]] = None, **options: Any) -> Prediction:
    """Iteration time, throughput and memory of one Megatron-LM training configuration on a GPU system.

    Parameters
    ----------
    megatron_args
        Megatron-LM's ``pretrain_gpt.py`` arguments, as a list of strings, read instead of the model and plan
        options (``--`` on the command line).
    **options
        ``phaze predict``'s options: ``model``, ``system``, ``tp``, ``pp``, ``dp``, ``mbs``, ``global_batch``, ...

    Returns
    -------
    Prediction
    """
    with _Files() as files:
        args = ["predict", *_option_args(options, files), "--json"]
        if megatron_args:
            args += ["--", *megatron_args]
        return Prediction(json.loads(_run(args)))


def plan(**options: Any) -> PlanResult:
    """The fastest Megatron-LM configurations of a model on a GPU system (``phaze plan``'s options)."""
    with _Files() as files:
        return PlanResult(json.loads(_run(["plan", *_option_args(options, files), "--json"])))


def validate(file: Optional[str] = None, **options: Any) -> Validation:
    """Predicted against measured runs or kernels (``phaze validate``'s options; ``file`` the runs CSV)."""
    with _Files() as files:
        args = ["validate", *([file] if file else []), *_option_args(options, files), "--json"]
        return Validation(json.loads(_run(args)))


def schedule(**options: Any) -> Result:
    """The optimal schedule of one layer pass on a chip (``phaze schedule``'s options)."""
    with _Files() as files:
        return Result(json.loads(_run(["schedule", *_option_args(options, files), "--json"])))


def place(**options: Any) -> Result:
    """PHAZE's placement of a model's layers on a cluster (``phaze place``'s options)."""
    with _Files() as files:
        return Result(json.loads(_run(["place", *_option_args(options, files), "--json"])))


def piper(file: str, **options: Any) -> Result:
    """Piper's planner on a DAG file (``phaze piper``'s options)."""
    with _Files() as files:
        return Result(json.loads(_run(["piper", _value(file, files), *_option_args(options, files), "--json"])))


def model(source: "str | Mapping[str, Any]", **options: Any) -> dict:
    """A model's hyper-parameters and counts: a preset name, a Hugging Face config.json path or its dict."""
    with _Files() as files:
        return json.loads(_run(["model", "show", _value(source, files), *_option_args(options, files), "--json"]))


def system(source: "str | Mapping[str, Any] | None" = None) -> dict:
    """A GPU or accelerator system (a preset name, a system JSON file or its dict), or the list of presets."""
    if source is None:
        return json.loads(_run(["system", "list", "--json"]))
    with _Files() as files:
        return json.loads(_run(["system", "show", _value(source, files), "--json"]))


def search(
    question: Optional[Mapping[str, Any]] = None,
    *,
    progress: Optional[ProgressCallback] = None,
    threads: int = 0,
    top: int = 5,
    pareto: bool = False,
    db: str = "",
    **options: Any,
) -> SearchResult:
    """The co-search of the chip and the training plan: the best point, the top list, the baselines.

    Parameters
    ----------
    question
        A search question as a dict (the JSON of ``phaze search --write-question``); options given beside it
        replace its values, as beside ``--question``.
    progress
        Called as ``progress(done, total, best)`` about ten times a second on the calling thread.
    threads
        Worker threads (0: one per CPU); the answer does not depend on it.
    top
        Designs in the top list.
    pareto
        Also find the exact Pareto frontiers (``SearchResult.pareto``).
    db
        A results file: a run stopped with Ctrl-C and run again with it resumes.
    **options
        ``phaze search``'s options: ``model`` (one or a list), ``devices``, ``global_batch``, ``mbs``, ``hbm``,
        ``tc``, ``planner``, ``stop_rule``, ...

    Returns
    -------
    SearchResult

    The search runs with the GIL released; Ctrl-C stops it and raises KeyboardInterrupt.
    """
    with _Files() as files:
        args = ["search", *_option_args(options, files), "--write-question", "-"]
        if question is not None:
            args += ["--question", files.path_of(question)]
        text = _run(args)
    answer, stats = _phaze.search(text, threads, top, pareto, db, progress)
    return SearchResult(json.loads(answer), stats)


def evaluate(
    arch: "str | Mapping[str, Any]",
    *,
    progress: Optional[ProgressCallback] = None,
    threads: int = 0,
    top: int = 5,
    db: str = "",
    **options: Any,
) -> SearchResult:
    """One chip priced end to end, as the search prices each of its designs (``phaze evaluate``).

    Parameters
    ----------
    arch
        An architecture preset name, an architecture JSON file or its dict (``phaze arch show``); it need not
        lie in the search's template.
    progress, threads, top, db
        As ``search``'s.
    **options
        ``phaze evaluate``'s options: ``model`` (one or a list), ``devices``, ``global_batch``, ``mbs``, ``hbm``
        (default: the chip's), ``execution``, ``attention_backend``, ...

    Returns
    -------
    SearchResult
        Its best point is the chip's best plan; its baselines hold the TPUv4-like chip beside it.
    """
    with _Files() as files:
        args = ["evaluate", "--arch", _value(arch, files), *_option_args(options, files), "--write-question", "-"]
        text = _run(args)
    answer, stats = _phaze.search(text, threads, top, False, db, progress)
    return SearchResult(json.loads(answer), stats)


def report(answer: "Result | Mapping[str, Any] | str", output: str, traces: Sequence[str] = (),
           title: Optional[str] = None) -> str:
    """Writes the HTML report of a search, predict or plan answer (``phaze report``): one self-contained page.

    Parameters
    ----------
    answer
        A result of ``search``, ``predict`` or ``plan``, its ``to_dict()``, or the path of its JSON file.
    output
        The HTML file to write.
    traces
        Chrome trace files of the same run (``--trace``), each drawn as a timeline.
    title
        The page's title.

    Returns
    -------
    str
        ``output``.
    """
    with _Files() as files:
        saved = isinstance(answer, str)
        source = answer if saved else files.path_of(answer.to_dict() if isinstance(answer, Result) else answer)
        args = ["report", source, "-o", output]
        for trace in traces:
            args += ["--trace", trace]
        if title or not saved:  # a temporary file's name makes no title
            args += ["--title", title or "phaze report"]
        _run(args)
    return output
