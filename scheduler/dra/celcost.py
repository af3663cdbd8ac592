"""The worst-case cost of a CEL device selector, as kube-apiserver estimates it before it stores one.

Upstream compiles each selector (``k8s.io/dynamic-resource-allocation/cel/compile.go``) and asks
cel-go for the expression's worst-case cost (``env.EstimateCost`` with Kubernetes'
``library.CostEstimator`` and DRA's size estimator); validation refuses an expression estimated
above ``CELSelectorExpressionMaxCost`` (``"too complex, exceeds cost limit"``), and the allocator
runs each selector with that budget as its runtime cost limit (``"operation cancelled: actual cost
limit exceeded"``). The ``cel`` engine this project evaluates with (``scheduler.dra.cel``) counts no
cost at all, so an expression like four nested ``[0, ..., 59].all(...)`` ran for tens of seconds.
This module is the static half of that budget: it parses the expression itself and computes
cel-go's estimate over the AST, so an expression over the budget is never evaluated.

**The parser** is CEL's grammar (``parser/gen/CEL.g4``): literals (ints, uints, doubles,
strings and bytes with their raw and triple-quoted forms, bools, null), identifiers, field
selection, indexing, global and member calls, list, map and message literals, the unary,
arithmetic, relational and logical operators and the conditional. Macros expand as cel-go's
``parser/macro.go`` expands them (``has``, ``all``, ``exists``, ``exists_one``, ``map`` with two or
three arguments, ``filter``), into comprehensions with the ``__result__`` accumulator, because the
estimate is computed over that expansion.

**The estimate** follows ``checker/cost.go`` (``coster``): an identifier or a field selected from
a map or struct costs 1, a constant 0, a list literal 10, a map literal 30, a message 40; a call
costs its arguments plus its function's cost (``functionCost``: O(1) functions 1; string equality,
ordering and concatenation, ``startsWith``/``endsWith``, ``contains``, ``matches`` and ``in`` on a
list by the sizes involved, with the string traversal factor 0.1 and the regex factor 0.25);
``&&`` and ``||`` cost both sides, ``?:`` the condition and the dearer branch; a comprehension
its range, its initial value and its result plus, for each element the range may hold, its loop
condition and step. Kubernetes' ``library/cost.go`` overrides the string and list library
functions (``lowerAscii``, ``split``, ``join``, ``find``, ``indexOf``, ...), the quantity and semver
ones, and ``==`` between two quantities or two versions (O(1));
its base environment makes ``has()`` free (``PresenceTestHasCost(false)``). Sizes come, in cel-go's
order, from the expression (a literal's length, a list literal's element count, a function's result
size), from DRA's size estimator for paths under ``device`` (``sizeEstimator``: the driver name at
most 63 characters, at most 32 attribute or capacity domains and 32 ids per domain, domains at
most 63 and ids at most 32 characters, an attribute value at most 64), from the type (a scalar is
1), or are unknown (2^64 - 1, and every sum and product saturates there). The types are the few the
estimate needs (the ``device`` declaration, literal lists and maps, what a comprehension variable
iterates over; everything else is ``dyn``), and where a ``dyn`` operand leaves several overloads
possible the dearest one counts, as cel-go's union over the overloads does.

What it does not model: ``cel.bind`` and the optional syntax (the engine rejects both), and the
cost estimators of cel-go's ``ext`` list functions (``lists.range``, ``sort``, ``distinct``, ...:
O(1) here); ``sets.*`` are ``ext/sets.go``'s. A chain of selections and calls along first operands
(``a + b + c + ...``) is costed in a loop, so a 10 KiB expression never exhausts the recursion
limit; parentheses nested more deeply than the engine parses (about 150) fail the estimate.
Upstream's own cases (``cel/compile_test.go``) are ported in ``tests/dra/test_cel.py``.

The parts, read in this order: ``cel_ast`` (the lexer, the parser and the macro expansion),
``cel_sizes`` (saturating arithmetic, the types and the size model of ``device``) and
``cel_estimate`` (the cost per expression and per call kind); this module is the entry point.
"""

from __future__ import annotations

from scheduler.dra.cel_ast import CostError, _Parser
from scheduler.dra.cel_estimate import _Coster

__all__ = ["CEL_SELECTOR_MAX_COST", "CEL_SELECTOR_MAX_LENGTH", "COST_LIMIT_EXCEEDED", "TOO_COMPLEX", "CostError",
           "estimate_cost"]

# pkg/apis/resource/types.go
CEL_SELECTOR_MAX_COST = 1_000_000        # CELSelectorExpressionMaxCost
CEL_SELECTOR_MAX_LENGTH = 10 * 1024      # CELSelectorExpressionMaxLength
# cel-go's runtime error when the cost limit is hit (interpreter/runtimecost.go), and validation's
# detail for an expression estimated over it (pkg/apis/resource/validation/validation.go).
COST_LIMIT_EXCEEDED = "operation cancelled: actual cost limit exceeded"
TOO_COMPLEX = "too complex, exceeds cost limit"


def estimate_cost(expression: str) -> int:
    """cel-go's worst-case cost estimate (``CostEstimate.Max``) of a device selector; raises
    ``CostError`` for an expression this parser cannot read."""
    try:
        tree = _Parser(expression).parse()
    except (IndexError, RecursionError) as e:
        raise CostError(str(e) or type(e).__name__) from None
    try:
        return _Coster().cost(tree)[0]
    except RecursionError as e:
        raise CostError("expression nested too deeply") from e
