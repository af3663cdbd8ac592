"""``scheduler/errors.py``'s docstring is the map of every exception class in the package.

The test imports every module under ``scheduler/`` and finds each class deriving from
BaseException that a module defines (not re-exports). Each must be named in the docstring: a class of
``errors.py`` by its bare name, any other by a dotted name ending in its module's path, so that
``dra.cel.CELError`` and ``simulator.cellib.CELError`` are told apart and a class that moves to another
module must be moved in the map too.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re

import scheduler
import scheduler.errors

_DOTTED = re.compile(r"[A-Za-z_][\w.]*[A-Za-z_0-9]")


def _exception_classes() -> list[tuple[str, str]]:
    found = []
    for info in pkgutil.walk_packages(scheduler.__path__, "scheduler."):
        if info.name.rsplit(".", 1)[-1] == "__main__":
            continue                                  # importing it would run the command line
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if inspect.isclass(obj) and issubclass(obj, BaseException) and obj.__module__ == module.__name__:
                found.append((module.__name__, name))
    return found


def _named(module: str, name: str, tokens: set[str]) -> bool:
    if module == "scheduler.errors":
        return name in tokens
    qualified = f"{module}.{name}"
    return any(t.endswith("." + name) and ("." + qualified).endswith("." + t) for t in tokens)


def test_every_exception_class_is_named_in_the_errors_map() -> None:
    doc = scheduler.errors.__doc__ or ""
    tokens = set(_DOTTED.findall(doc))
    classes = _exception_classes()
    assert len(classes) > 40, classes                 # the walk reached the whole package
    missing = [f"{m}.{n}" for m, n in classes if not _named(m, n, tokens)]
    assert missing == [], f"exception classes missing from scheduler/errors.py's docstring: {missing}"


def test_the_map_names_only_classes_that_exist() -> None:
    doc = scheduler.errors.__doc__ or ""
    known = {f"{m}.{n}" for m, n in _exception_classes()}
    stale = []
    for token in set(_DOTTED.findall(doc)):
        parts = token.split(".")
        if len(parts) < 2 or parts[0] == "scheduler":
            continue                                  # only module.ClassName names, relative to scheduler
        if parts[-1].endswith(("Error", "Failed", "Exceeded", "Retry", "Mismatch", "Conflict")) \
                and not any(k.endswith("." + token) for k in known):
            stale.append(token)
    assert stale == [], f"scheduler/errors.py's docstring names classes that no module defines: {stale}"
