"""Tests for ``scheduler.model``'s parts with upstream tables of their own (``labels``, ``nodeaffinity``)."""
