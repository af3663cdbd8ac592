"""The simulated controllers: the part of a cluster, beside kube-apiserver, that a scheduler can observe.

What would run in kube-controller-manager or in a kubelet lives here, one module per upstream component.
Each is a ``base.Controller`` (a store listener with a coalescing work queue) typed against
``interfaces.ClusterWriter``, never the server class: it writes
through the server's storage paths (``create``, ``write``, ``remove``, ``delete``), so its writes take
resourceVersions and reach watchers like any client's.

- ``kubelet.Kubelet`` (``pkg/kubelet``): when ``pod_running_after`` is set, a bound pod becomes Running and
  Ready that many seconds after its Binding; a bound pod deleted with a grace period is held for
  ``min(grace, pod_termination_seconds)`` seconds and then removed (default 0: at once).
- ``workloads.WorkloadControllers``: Deployments, ReplicaSets, ReplicationControllers, StatefulSets,
  DaemonSets and Jobs; ``garbagecollector.GarbageCollector``: dependents through ``ownerReferences``.
- ``volumes.VolumeController``: the PersistentVolume controller, an external provisioner
  (``provision_seconds`` after a claim asks; negative: never) and the PV/PVC protection controllers.
- ``resourceclaims.ResourceClaimController``: claims from templates, reservations cleaned,
  deallocation; the kubelet starts a pod with claims only once they are allocated and reserved for it.
  ``gpudriver.GpuDriver``: a simulated DRA driver publishing ``gpus_per_node`` GPUs per node.
- ``namespace.NamespaceController``: a deleted namespace is Terminating, then emptied, then removed.
- ``disruption.DisruptionController``: PodDisruptionBudget status, which the ``pods/eviction``
  subresource (``registry/core/eviction.py``, the API side) asks.

- ``eventttl.EventTTL``: an Event is removed ``event_ttl`` seconds (kube-apiserver's ``--event-ttl``,
  1 h) after its last write, as its etcd lease expires.

``manager.Controllers`` builds them all and owns their timers and tasks.
"""
