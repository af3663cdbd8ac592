"""Kopf's cleanup: release the stop flag that the runtime gave ``kopf.run``.

Kopf waits on a ``concurrent.futures.Future`` stop flag in an executor thread. The runtime resolves
that flag only when its worker thread dies (``OperatorRuntime.kopf_stop``); after an ordinary SIGTERM
nothing would, and the interpreter could not exit while that executor thread waits. So Kopf's own
cleanup resolves it.
"""

from typing import Any

import kopf


@kopf.on.cleanup()
def release_stop_flag(memo: kopf.Memo, **_: Any) -> None:
    memo.runtime.release_kopf_stop()
