"""Everything that measures (an edge): ``kopf-scheduler bench``, ``cluster-bench`` and ``soak``.

Read in this order: ``workloads`` (upstream's scheduler_perf templates and sizes) → ``throughput``
(SchedulingThroughput as upstream computes it) → ``core`` (a workload against the scheduling core,
in-process) → ``processes`` (the simulated cluster and the operator as processes of their own, free
ports, stopping, peak RSS) → ``e2e`` (a workload through the real operator) → ``report`` (runs,
medians, output) → ``environment`` (where a figure was measured: commit, packages, CPU, load) →
``against`` (``bench --against REV``: alternated pairs of two fresh installs) → ``cluster_bench``
(the simulated cluster alone) → ``soak`` (churn, API errors and leader kills against two replicas).

The drivers start the simulated cluster and the operator with ``kopf-scheduler cluster`` and
``kopf-scheduler run``; nothing here imports ``scheduler.app`` or ``scheduler.simulator``.
"""
