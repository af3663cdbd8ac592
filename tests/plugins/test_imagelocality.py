"""ImageLocality, after upstream's ``imagelocality/image_locality_test.go``."""

from __future__ import annotations

import hashlib

import pytest

from scheduler.cache import normalized_image_name
from scheduler.model import Node, Pod, parse_node
from scheduler.plugins import imagelocality
from tests.builders import node, pod, run_score, setup


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


# --- image_locality_test.go TestImageLocalityPriority and TestNormalizedImageName ---------------------
# The current table: the maximum threshold is 1000MB × the pod's containers, init containers
# included (maxContainerThreshold × (len(InitContainers) + len(Containers))); each image's size is
# scaled by the share of nodes that have it. Nodes list several names per image, as kubelet does.
MB = 1024 * 1024


def image_node(name: str, *images: tuple[list[str], int]) -> Node:
    """``makeImageNode(name, v1.NodeStatus{Images: ...})``: names and size in MB per image."""
    return parse_node({"metadata": {"name": name},
                       "status": {"images": [{"names": names, "sizeBytes": mb * MB} for names, mb in images]}})


def images_pod(*images: str, init: tuple[str, ...] = ()) -> Pod:
    spec = {"containers": [{"name": f"c{i}", "image": im} for i, im in enumerate(images)],
            "initContainers": [{"name": f"i{i}", "image": im} for i, im in enumerate(init)]}
    return pod("p", None, None, spec=spec)


NODE_403002000 = (["gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"], 40), (["gcr.io/300:latest", "gcr.io/300:v1"], 300), \
    (["gcr.io/2000:latest"], 2000)
NODE_25010 = (["gcr.io/250:latest"], 250), (["gcr.io/10:latest", "gcr.io/10:v1"], 10)
NODE_60040900 = (["gcr.io/600:latest"], 600), (["gcr.io/40:latest"], 40), (["gcr.io/900:latest"], 900)
NODE_300600900 = (["gcr.io/300:latest"], 300), (["gcr.io/600:latest"], 600), (["gcr.io/900:latest"], 900)
NODE_400030 = (["gcr.io/4000:latest"], 4000), (["gcr.io/30:latest"], 30)
NODE_203040 = (["gcr.io/20:latest"], 20), (["gcr.io/30:latest"], 30), (["gcr.io/40:latest"], 40)

IMAGE_LOCALITY_PRIORITY = [
    # node1: 40M/2 < 23M -> 0; node2: 100 * (250M/2 - 23M) / (1000M * 2 - 23M) = 5
    ("two images spread on two nodes, prefer the larger image one", images_pod("gcr.io/40", "gcr.io/250"),
     [image_node("node1", *NODE_403002000), image_node("node2", *NODE_25010)], [0, 5]),
    # node1: 100 * ((40M + 300M)/2 - 23M) / (1000M * 2 - 23M) = 7
    ("two images on one node, prefer this node", images_pod("gcr.io/40", "gcr.io/300"),
     [image_node("node1", *NODE_403002000), image_node("node2", *NODE_25010)], [7, 0]),
    # node1: 4000M/2 >= 1000M * 2, max-threshold; node2: 10M/2 < 23M
    ("if exceed limit, use limit", images_pod("gcr.io/10", "gcr.io/4000"),
     [image_node("node1", *NODE_400030), image_node("node2", *NODE_25010)], [100, 0]),
    # node1: 100 * (4000M/3 - 23M) / (1000M * 2 - 23M) = 66
    ("if exceed limit, use limit (with node which has no images present)", images_pod("gcr.io/10", "gcr.io/4000"),
     [image_node("node1", *NODE_400030), image_node("node2", *NODE_25010), image_node("node3")], [66, 0, 0]),
    # node1: 100 * (600M * 2/3 + 900M * 2/3 - 23M) / (1000M * 3 - 23M) = 32;
    # node2: 100 * (300M * 1/3 + 600M * 2/3 + 900M * 2/3 - 23M) / (1000M * 3 - 23M) = 36
    ("pod with multiple large images, node2 is preferred", images_pod("gcr.io/300", "gcr.io/600", "gcr.io/900"),
     [image_node("node1", *NODE_60040900), image_node("node2", *NODE_300600900), image_node("node3")], [32, 36, 0]),
    # node1: 100 * (30M + 40M * 1/2 - 23M) / (1000M * 2 - 23M) = 1; node2: (30M * 1/2 < 23M) 0
    ("pod with multiple small images", images_pod("gcr.io/30", "gcr.io/40"),
     [image_node("node1", *NODE_203040), image_node("node2", *NODE_400030)], [1, 0]),
    # node1: 100 * (300M * 1/2 - 23M) / (1000M * 2 - 23M) = 6; node2: 30M * 1/2 < 23M
    ("include InitContainers: two images spread on two nodes, prefer the larger image one",
     images_pod("gcr.io/30", init=("gcr.io/300",)),
     [image_node("node1", *NODE_403002000), image_node("node2", *NODE_203040)], [6, 0]),
]


@pytest.mark.parametrize(("name", "p", "nodes", "want"), IMAGE_LOCALITY_PRIORITY,
                         ids=[c[0] for c in IMAGE_LOCALITY_PRIORITY])
def test_image_locality_priority(name: str, p: Pod, nodes: list[Node], want: list[int]) -> None:
    assert run_score(imagelocality.ImageLocality(), p, nodes) == want, name


UNIFORM = [*IMAGE_LOCALITY_PRIORITY,
           ("no node holds the pod's image", pod("p", image="other:1"),
            [node("a", images=[("nginx:1.25", 500 * 1024 * 1024)]), node("b")], [0, 0])]


@pytest.mark.parametrize(("name", "p", "nodes", "want"), UNIFORM, ids=[c[0][:80] for c in UNIFORM])
def test_uniform_score_is_every_rows_score(name: str, p: Pod, nodes: list[Node], want: list[int]) -> None:
    """UniformScorePlugin: where ImageLocality says it scores every row 0 (no node holds an image
    of the pod), Score agrees; with an image held somewhere it scores the rows."""
    il = imagelocality.ImageLocality()
    snap, state, rows = setup(nodes, [])
    same = il.uniform_score(state, p, snap)
    held = any(snap.table.images.get(normalized_image_name(i)) for i in p.images)
    assert (same is None) == held, name
    if same is not None:
        assert il.score_nodes(state, p, snap, rows).tolist() == [same] * len(rows) == want, name


def _fake_digest(content: str) -> str:
    return "sha256:" + hashlib.sha256(content.encode()).hexdigest()


@pytest.mark.parametrize(("name", "image", "want"), [
    ("add :latest postfix 1", "root", "root:latest"),
    ("add :latest postfix 2", "gcr.io:5000/root", "gcr.io:5000/root:latest"),
    ("keep it as is 1", "root:tag", "root:tag"),
    ("keep it as is 2", "root@" + _fake_digest("root"), "root@" + _fake_digest("root")),
])
def test_normalized_image_name(name: str, image: str, want: str) -> None:
    assert normalized_image_name(image) == want, name
