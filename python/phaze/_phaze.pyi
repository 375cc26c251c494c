"""Type stubs of the extension module (python/src/module.cpp)."""

from typing import Any, Callable, Optional

class InputError(ValueError):
    """Bad input: the command line's one-line message, which names the option or file, field and value."""

def run_command(args: list[str]) -> tuple[int, str, str]:
    """Runs ``phaze ARGS...`` in process: (exit status, standard output, standard error)."""

def search(
    question: str,
    threads: int,
    top: int,
    pareto: bool,
    db: str,
    progress: Optional[Callable[[int, int, str], Any]],
) -> tuple[str, dict[str, Any]]:
    """Runs the search of a question file's JSON text: (answer JSON text, run figures)."""
