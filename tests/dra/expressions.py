"""CEL selectors the tests share: the issue #32 selector that froze the scheduler."""

from __future__ import annotations


def nested_comprehensions(depth: int, size: int = 60) -> str:
    """``[0, ..., size - 1].all(v0, [...].all(v1, ... v0 + v1 + ... >= 0))``, ``depth`` deep: four
    deep over 60 elements is the issue's selector (746 bytes; cel-go estimates 145,635,251)."""
    items = "[" + ",".join(str(i) for i in range(size)) + "]"
    expression = " + ".join(f"v{i}" for i in range(depth)) + " >= 0"
    for i in reversed(range(depth)):
        expression = f"{items}.all(v{i}, {expression})"
    return expression
