"""The application (upstream's ``cmd/kube-scheduler/app``): the edge that runs the core as a process.

Read in this order:

* ``cli``: the ``kopf-scheduler`` command line (``run``, ``simulate``, ``crd``, ``cluster``,
  ``cluster-bench``, ``bench``, ``soak``). Each command imports what it needs when it runs, so
  ``kopf-scheduler crd`` loads neither Kopf nor the simulator;
* ``runtime``: ``OperatorRuntime``, the operator process. Its worker thread owns an event loop that
  runs the initial sync, the pod informer (pods, the hot path, enter here: list, watch with bookmarks,
  relist on 410), the worker and the binding cycles, the HTTP endpoints and leader election. Kopf runs
  on the main thread and loads the handler scripts of ``operator/`` by path: SchedulingProfiles, nodes,
  namespaces and PodDisruptionBudgets enter through them;
* ``serving``: ``/healthz``, ``/livez``, ``/readyz`` and ``/metrics`` (aiohttp), on the worker's loop;
* ``simulate``: the real operator against the embedded simulated cluster, with a placement report.

The app may import every other package; nothing imports the app (import-linter's contracts in
``pyproject.toml``). The benchmarks start it as a process (``kopf-scheduler run``), never import it.
"""
