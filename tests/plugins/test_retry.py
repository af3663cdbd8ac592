"""``scheduler.plugins.retry``: client-go's ``RetryOnConflict`` with ``DefaultRetry`` (5 attempts)."""

from __future__ import annotations

import asyncio

import pytest

from scheduler.errors import ConflictError
from scheduler.plugins.retry import RETRY_STEPS, retry_on_conflict


def test_a_conflict_is_retried_and_the_attempt_told_its_number() -> None:
    seen: list[int] = []

    async def attempt(n: int) -> str:
        seen.append(n)
        if n < 2:
            raise ConflictError("409")
        return "written"

    assert asyncio.run(retry_on_conflict(attempt, ConflictError, interval=0)) == "written"
    assert seen == [0, 1, 2]


def test_the_last_conflict_is_raised_after_default_retry_steps() -> None:
    seen: list[int] = []

    async def attempt(n: int) -> None:
        seen.append(n)
        raise ConflictError(f"409 #{n}")

    with pytest.raises(ConflictError, match="409 #4"):
        asyncio.run(retry_on_conflict(attempt, ConflictError, interval=0))
    assert RETRY_STEPS == 5 and seen == [0, 1, 2, 3, 4]


def test_any_other_error_ends_it_at_once() -> None:
    seen: list[int] = []

    async def attempt(n: int) -> None:
        seen.append(n)
        raise ValueError("gone")

    with pytest.raises(ValueError, match="gone"):
        asyncio.run(retry_on_conflict(attempt, ConflictError, interval=0))
    assert seen == [0]
