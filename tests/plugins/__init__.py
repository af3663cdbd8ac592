"""Tests for ``scheduler.plugins``: one module per plugin module, tables after upstream's ``*_test.go``."""
