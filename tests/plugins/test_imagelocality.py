"""ImageLocality, after upstream's ``imagelocality/image_locality_test.go``."""

from __future__ import annotations

from scheduler.plugins import imagelocality
from tests.builders import node, pod, run_score


def test_image_locality() -> None:
    mb = 1024 * 1024
    nodes = [node("a", images=[("nginx:1.25", 500 * mb)]), node("b")]
    got = run_score(imagelocality.ImageLocality(), pod("p", image="nginx:1.25"), nodes)
    # 500MB spread over 1 of 2 nodes = 250MB; (250-23)/(1000-23) * 100 = 23
    assert got == [23, 0]


def test_image_locality_with_huge_image_sizes() -> None:
    il = imagelocality.ImageLocality()
    nodes = [node("a", images=[("img:1", 2**63 - 1)]), node("b", images=[("img:1", 10**400)]), node("c")]
    got = run_score(il, pod("p", image="img:1"), nodes)
    assert got[2] == 0 and all(0 <= s <= 100 for s in got)
