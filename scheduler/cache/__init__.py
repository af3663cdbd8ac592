"""Node and pod cache (``cache``), its columnar node state (``node_table``), incremental pod
counts (``counters``), the per-cycle view the plugins read (``snapshot``), hypothetical pod moves
(``what_if``), and the storage objects the volume plugins look up (``volumes``)."""

from scheduler.cache.cache import DEFAULT_ASSUMED_TTL, Cache, PodState
from scheduler.cache.counters import AllTermsMatch, SpreadMatch, TermMatch, term_match
from scheduler.cache.node_table import CAP, NZ_CPU, NZ_MEM, SCORE_SAFE, NodeInfo, NodeTable, normalized_image_name
from scheduler.cache.snapshot import Snapshot, zone_interleaved
from scheduler.cache.volumes import VolumeStore
from scheduler.cache.what_if import WhatIf

__all__ = [
    "CAP",
    "DEFAULT_ASSUMED_TTL",
    "NZ_CPU",
    "NZ_MEM",
    "SCORE_SAFE",
    "AllTermsMatch",
    "Cache",
    "NodeInfo",
    "NodeTable",
    "PodState",
    "Snapshot",
    "SpreadMatch",
    "TermMatch",
    "VolumeStore",
    "WhatIf",
    "normalized_image_name",
    "term_match",
    "zone_interleaved",
]
