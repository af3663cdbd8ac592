"""What kube-apiserver refuses in a CRD's schemas because of ``default:`` values and CEL rules.

Upstream: ``apiextensions/validation/validation.go`` (each ``x-kubernetes-validations`` entry) and
``schema/defaulting/validation.go`` (``ValidateDefaults``). For each served version's
``openAPIV3Schema``, walked through ``properties[name]``, ``additionalProperties`` and ``items``:

* a rule that does not compile: ``...x-kubernetes-validations[0].rule: Invalid value:
  apiextensions.ValidationRule{...}: compilation failed: ERROR: <input>:1:6: ...`` (an empty rule is
  ``Required value``); a ``messageExpression`` that does not compile, the same at
  ``.messageExpression`` (``messageExpression compilation failed: ...``); a ``reason`` that is not one
  of the four; a ``fieldPath`` that does not parse or names no field of the schema; a rule naming
  ``oldSelf`` where no old value can be correlated (the ``items`` of a list that is not a ``map`` list);
* a default that is not pruned (``...default: Invalid value: ...: must not have unknown fields``), or
  that fails its own schema (the OpenAPI errors, at ``...default``) or the CEL rules at and below its
  node (as an update from the default to itself, then as a create).

Values are shown as Go's ``%#v`` shows them where it matters (the rule struct), as JSON otherwise.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from scheduler.simulator import celrules, schema

__all__ = ["check_crd"]

Obj = dict[str, Any]
Cause = tuple[str, str, str]


def check_crd(crd: Obj) -> list[Cause]:
    """The causes for refusing ``crd`` over its defaults and rules; empty when none."""
    out: list[Cause] = []
    for i, ver in enumerate((crd.get("spec") or {}).get("versions") or ()):
        s = ((ver or {}).get("schema") or {}).get("openAPIV3Schema") if isinstance(ver, dict) else None
        if isinstance(s, dict):
            _walk(s, f"spec.versions[{i}].schema.openAPIV3Schema", out, correlatable=True)
    return out


def _go_string(s: str) -> str:
    return json.dumps(s, ensure_ascii=False)


def _rule_value(entry: Obj) -> str:
    """The ValidationRule as ``%#v`` prints it (pointers print as addresses upstream; a fixed one here)."""
    reason = "(*apiextensions.FieldValueErrorReason)(nil)" if entry.get("reason") is None else \
        "(*apiextensions.FieldValueErrorReason)(0xc000010000)"
    optional = "(*bool)(nil)" if entry.get("optionalOldSelf") is None else "(*bool)(0xc000010008)"
    return (f"apiextensions.ValidationRule{{Rule:{_go_string(str(entry.get('rule') or ''))}, "
            f"Message:{_go_string(str(entry.get('message') or ''))}, "
            f"MessageExpression:{_go_string(str(entry.get('messageExpression') or ''))}, Reason:{reason}, "
            f"FieldPath:{_go_string(str(entry.get('fieldPath') or ''))}, OptionalOldSelf:{optional}}}")


def _walk(s: Obj, path: str, out: list[Cause], correlatable: bool) -> None:
    for j, entry in enumerate(s.get("x-kubernetes-validations") or ()):
        if isinstance(entry, dict):
            _check_rule(s, entry, path, f"{path}.x-kubernetes-validations[{j}]", out, correlatable)
    if "default" in s:
        _check_default(s, f"{path}.default", out)
    for k, sub in (s.get("properties") or {}).items():
        if isinstance(sub, dict):
            _walk(sub, f"{path}.properties[{k}]", out, correlatable)
    if isinstance(s.get("additionalProperties"), dict):
        _walk(s["additionalProperties"], f"{path}.additionalProperties", out, correlatable)
    if isinstance(s.get("items"), dict):
        _walk(s["items"], f"{path}.items", out,
              correlatable and s.get("x-kubernetes-list-type") == "map")


def _check_rule(s: Obj, entry: Obj, path: str, at: str, out: list[Cause], correlatable: bool) -> None:
    """One ``x-kubernetes-validations`` entry: its rule compiles (and uses oldSelf only where it can
    correlate), its reason is one of the known ones, and its fieldPath names a field of ``s``."""
    rule = celrules.compile_rule(entry, s, root=path.endswith("openAPIV3Schema"))
    if not rule.rule.strip():
        out.append((f"{at}.rule", "FieldValueRequired", "Required value"))
    elif rule.error.startswith("messageExpression "):
        out.append((f"{at}.messageExpression", "FieldValueInvalid",
                    f"Invalid value: {_go_string(str(entry['messageExpression']))}: {rule.error}"))
    elif rule.error:
        out.append((f"{at}.rule", "FieldValueInvalid", f"Invalid value: {_rule_value(entry)}: {rule.error}"))
    elif rule.uses_old and not correlatable:
        out.append((f"{at}.rule", "FieldValueInvalid",
                    f"Invalid value: {_rule_value(entry)}: oldSelf cannot be used on the uncorrelatable portion "
                    f"of the schema within {path}"))
    if entry.get("reason") is not None and entry["reason"] not in celrules.REASONS:
        supported = ", ".join(f'"{r}"' for r in celrules.REASONS)
        out.append((f"{at}.reason", "FieldValueNotSupported",
                    f"Unsupported value: {_go_string(str(entry['reason']))}: supported values: {supported}"))
    fp = entry.get("fieldPath")
    if fp:
        _, problem = celrules.field_path(str(fp), s)
        if problem:
            out.append((f"{at}.fieldPath", "FieldValueInvalid",
                        f"Invalid value: {_go_string(str(fp))}: fieldPath must be a valid path: {problem}"))


def _check_default(s: Obj, at: str, out: list[Cause]) -> None:
    value = s["default"]
    pruned = copy.deepcopy(value)
    schema.prune(s, pruned, top=False)
    if pruned != value:
        out.append((at, "FieldValueInvalid", f"Invalid value: {_json(value)}: must not have unknown fields"))
        return
    causes = schema.validate(s, value, at, rules=False)
    if not causes and celrules.has_rules(s):
        # As an update from the default to itself (transition rules; the others ratchet), then, if that
        # passed, as a create (ratcheting on: what an optionalOldSelf rule sees for a new value).
        causes = celrules.validate(s, value, value, at) or celrules.validate(s, value, None, at)
    out.extend(causes)


def _json(v: Any) -> str:
    # A map's or list's value as %#v would print it is Go syntax; JSON is as readable and stable.
    return _go_string(v) if isinstance(v, str) else json.dumps(v, separators=(",", ":"))
