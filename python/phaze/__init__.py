"""phaze: which accelerator, and which way of spreading the training of a large language model over many of
them, gives the highest training throughput.

The package runs phaze's C++ library in process. Every function takes keyword arguments named as the command
line's options (``global_batch=4096`` for ``--global-batch 4096``; a list for a comma-separated value; ``True``
for a flag) and returns a typed result whose ``to_dict()`` equals the command's JSON answer. Bad input raises
:class:`InputError` (a :class:`ValueError`) with the command line's message.

Examples
--------
>>> import phaze
>>> run = phaze.predict(model="llama2-7b", system="dgx-h100", tp=2, pp=1, dp=4, mbs=1, global_batch=64)
>>> run.iteration_time_s                                           # doctest: +SKIP
>>> answer = phaze.search(model="gpt2-xl", tc=[8], progress=print)  # doctest: +SKIP
>>> answer.top                                                      # a pandas DataFrame  # doctest: +SKIP
"""

from ._phaze import InputError
from ._results import (
    PlanResult,
    Prediction,
    Result,
    SearchResult,
    Validation,
)
from ._commands import (
    command,
    evaluate,
    model,
    piper,
    place,
    plan,
    predict,
    report,
    schedule,
    search,
    system,
    validate,
)

__all__ = [
    "InputError",
    "PlanResult",
    "Prediction",
    "Result",
    "SearchResult",
    "Validation",
    "command",
    "evaluate",
    "model",
    "piper",
    "place",
    "plan",
    "predict",
    "report",
    "schedule",
    "search",
    "system",
    "validate",
]
