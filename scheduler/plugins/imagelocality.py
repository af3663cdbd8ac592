"""ImageLocality: prefer nodes that already have the pod's container images, weighted by image
size and by how widely the image is spread (``size * nodesWithImage / allNodes``), clamped to
[23MB, 1000MB × containers] and scaled to 0..100, as upstream."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from scheduler.cache import Snapshot, normalized_image_name
from scheduler.framework import interfaces as fwk
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.handle import Handle
from scheduler.framework.interfaces import MAX_NODE_SCORE  # bare: Score reads it per node
from scheduler.framework.signature import IMAGE_NAMES_SIGNER_NAME, SignFragment
from scheduler.framework.status import SUCCESS, Status
from scheduler.model import Pod

NAME = "ImageLocality"
MB = 1024 * 1024
MIN_THRESHOLD = 23 * MB
MAX_CONTAINER_THRESHOLD = 1000 * MB


class ImageLocality:
    """Upstream's ``imagelocality.ImageLocality``: Score."""

    name = NAME

    def sign_pod(self, pod: Pod) -> tuple[Sequence[SignFragment], Status]:
        """SignPlugin: Score reads the images, as normalised names (upstream's canonical names)."""
        return ((IMAGE_NAMES_SIGNER_NAME, tuple(normalized_image_name(i) for i in pod.images)),), SUCCESS

    def uniform_score(self, state: CycleState, pod: Pod, snapshot: Snapshot) -> int | None:
        """UniformScorePlugin: 0 on every row when no node holds any of the pod's images (the
        sum of sizes is then under the minimum threshold everywhere), so no row is read."""
        t = snapshot.table
        return None if any(t.images.get(normalized_image_name(i)) for i in pod.images) else 0

    def score_nodes(self, state: CycleState, pod: Pod, snapshot: Snapshot, rows: fwk.Rows) -> fwk.Scores:
        t = snapshot.table
        found = [h for h in (t.images.get(normalized_image_name(i)) for i in pod.images) if h]
        if not found:
            return np.zeros(len(rows), np.int64)  # no node has any of the images: all score 0
        total_nodes = max(snapshot.num_nodes, 1)
        sums = np.zeros(t.capacity, np.float64)
        for holders in found:
            idx = np.fromiter(holders.keys(), np.int64, len(holders))
            live = t.valid[idx]
            spread = int(live.sum()) / total_nodes
            sizes = np.fromiter(holders.values(), np.float64, len(holders))
            np.add.at(sums, idx, np.floor(sizes * spread))
        n = max(len(pod.images), 1)
        max_threshold = MAX_CONTAINER_THRESHOLD * n
        s = np.clip(sums[rows], MIN_THRESHOLD, max_threshold)
        return (MAX_NODE_SCORE * (s - MIN_THRESHOLD) // (max_threshold - MIN_THRESHOLD)).astype(np.int64)

    def score_extensions(self) -> fwk.ScoreExtensions | None:
        return None


def new(args: None, handle: Handle) -> ImageLocality:
    return ImageLocality()


if TYPE_CHECKING:
    _: type[fwk.BatchScorePlugin] = ImageLocality
    __: type[fwk.UniformScorePlugin] = ImageLocality
