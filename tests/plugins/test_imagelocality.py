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


# image_locality_test.go TestImageLocalityPriority, with the current formula's expectations (the
# threshold scales with the number of containers: 1000MB × 2 here; upstream's comments give the
# arithmetic, e.g. 100 × (250M/2 − 23M) / (1000M × 2 − 23M) = 5).
def _images_pod(*images: str) -> object:
    return pod("p", None, None, spec={"containers": [{"name": f"c{i}", "image": im} for i, im in enumerate(images)]})


def _node_403002000() -> object:
    mb = 1024 * 1024
    return node("machine1", images=[("gcr.io/40:latest", 40 * mb), ("gcr.io/300:latest", 300 * mb),
                                    ("gcr.io/2000:latest", 2000 * mb)])


def _node_25010() -> object:
    mb = 1024 * 1024
    return node("machine2", images=[("gcr.io/250:latest", 250 * mb), ("gcr.io/10:latest", 10 * mb)])


def test_image_locality_priority_two_images_spread_on_two_nodes() -> None:
    """"two images spread on two nodes, prefer the larger image one": 40M/2 < 23M -> 0; 250M/2 -> 5."""
    got = run_score(imagelocality.ImageLocality(), _images_pod("gcr.io/40", "gcr.io/250"),
                    [_node_403002000(), _node_25010()])
    assert got == [0, 5]


def test_image_locality_priority_two_images_on_one_node() -> None:
    """"two images on one node, prefer this node": 100 × ((40M + 300M)/2 − 23M) / (2000M − 23M) = 7."""
    got = run_score(imagelocality.ImageLocality(), _images_pod("gcr.io/40", "gcr.io/300"),
                    [_node_403002000(), _node_25010()])
    assert got == [7, 0]


def test_image_locality_priority_limit() -> None:
    """After "if exceed limit, use limit (with node which has no images present)", computed with the
    current formula: a 2000MB image on one node of three,
    spread 1/3: 100 × (2000M/3 − 23M) / (2000M − 23M) = 32; the 10MB image is below the minimum."""
    got = run_score(imagelocality.ImageLocality(), _images_pod("gcr.io/2000", "gcr.io/10"),
                    [_node_403002000(), _node_25010(), node("machine3")])
    assert got == [32, 0, 0]
