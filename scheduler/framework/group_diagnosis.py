"""Why a gang did not fit, node by node (beyond upstream; the shape kubernetes/kubernetes#142315
proposes for a failed PodGroup cycle).

A pod's FitError says why each node rejected *that pod*. For a gang this hides the answer a user
needs: the members are placed one after another on one snapshot, so a node may take two members and
then refuse the third. ``GroupDiagnosis`` collects, over one PodGroup cycle, how many members each node
accepted and the first reason it rejected a member, and ``message`` renders it::

    pod group ns/name: 2 of 4 pods placed, minCount 4; 0/3 nodes can take the rest:
    node-a accepted 1, then Insufficient cpu; node-b accepted 1, then Insufficient cpu;
    node-c accepted 0, node(s) had untolerated taint(s).

Nodes are listed most-accepting first (then by name), at most ``MAX_NODES`` of them, the rest
counted. The PodGroup's ``PodGroupInitiallyScheduled=False`` condition and every member's
FailedScheduling event carry this message (``scheduler/cycle.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["MAX_NODES", "GroupDiagnosis"]

MAX_NODES = 10


@dataclass(slots=True)
class GroupDiagnosis:
    nodes: tuple[str, ...] = ()
    accepted: dict[str, int] = field(default_factory=dict)
    rejected: dict[str, str] = field(default_factory=dict)

    def place(self, node: str) -> None:
        self.accepted[node] = self.accepted.get(node, 0) + 1

    def reject(self, node: str, reason: str) -> None:
        """The first reason the node rejected a member is kept (later ones repeat it, mostly)."""
        self.rejected.setdefault(node, reason)

    def message(self, group: str, *, placed: int, members: int, min_count: int) -> str:
        names = sorted(set(self.nodes) | self.accepted.keys() | self.rejected.keys(),
                       key=lambda n: (-self.accepted.get(n, 0), n))
        if not names:
            return f"pod group {group}: {placed} of {members} pods placed, minCount {min_count}; no nodes available"
        parts = []
        for n in names[:MAX_NODES]:
            took = self.accepted.get(n, 0)
            why = self.rejected.get(n)
            if why is None:
                parts.append(f"{n} accepted {took}")
            else:
                parts.append(f"{n} accepted {took}, {'then ' if took else ''}{why}")
        more = f"; and {len(names) - MAX_NODES} more nodes" if len(names) > MAX_NODES else ""
        full = sum(1 for n in names if n in self.rejected)
        return (f"pod group {group}: {placed} of {members} pods placed, minCount {min_count}; "
                f"{len(names) - full}/{len(names)} nodes can take the rest: {'; '.join(parts)}{more}.")
