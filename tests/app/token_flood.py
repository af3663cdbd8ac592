"""A flood of random bearer tokens at the scheduler's secure port, run as its own process (so its
threads do not share the scheduler's interpreter): ``threads`` keep-alive connections, each sending
``GET /metrics`` with a fresh random token as fast as it is answered, for ``seconds``; a connection
the server closes or refuses is opened again after 50 ms. Prints ``answered refused``."""

from __future__ import annotations

import http.client
import secrets
import ssl
import sys
import threading
import time


def main(port: int, seconds: float, threads: int) -> None:
    ctx = ssl._create_unverified_context()
    end = time.monotonic() + seconds
    counts = {"answered": 0, "refused": 0}
    lock = threading.Lock()

    def flood() -> None:
        conn: http.client.HTTPSConnection | None = None
        while time.monotonic() < end:
            try:
                if conn is None:
                    conn = http.client.HTTPSConnection("127.0.0.1", port, context=ctx, timeout=5)
                conn.request("GET", "/metrics", headers={"Authorization": f"Bearer {secrets.token_hex(16)}"})
                conn.getresponse().read()
                with lock:
                    counts["answered"] += 1
            except (OSError, http.client.HTTPException):
                with lock:
                    counts["refused"] += 1
                if conn is not None:
                    conn.close()
                conn = None
                time.sleep(0.05)
    workers = [threading.Thread(target=flood, daemon=True) for _ in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(timeout=seconds + 10)
    print(counts["answered"], counts["refused"])


if __name__ == "__main__":
    main(int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]))
