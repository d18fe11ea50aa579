"""gpu_check.sh's serve step: start `gpudash serve` on a free loopback port, scrape /metrics once, stop it.

    python benchmarks/gpu_check_serve.py --python PY [--timeout 30]

Prints the scraped exposition on stdout; on stderr, the server's own lines, then one line with the time from
spawn to ready, the scrape's status, size, time and count of gpudash_ samples, and the server's exit code.
Exits 0 when the scrape answered 200 with gpudash_ samples and the server stopped cleanly on SIGTERM, else 1.
Standard library only (the lent machine has no curl guarantee; this needs nothing beyond its Python).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import threading
import time
import urllib.request

READY = re.compile(r"gpudash: serving (http://\S+/metrics)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default=sys.executable, help="the Python that runs gpudash")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds for the server to be ready")
    args = parser.parse_args()

    spawned = time.perf_counter()
    server = subprocess.Popen(
        [args.python, "-m", "gpudash", "serve", "--listen", "127.0.0.1:0"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: list[str] = []
    ready = threading.Event()
    url: list[str] = []

    def drain() -> None:  # the server's stderr, read to its end so it never blocks on a full pipe
        assert server.stderr is not None
        for line in server.stderr:
            lines.append(line.rstrip("\n"))
            found = READY.search(line)
            if found and not url:
                url.append(found.group(1))
                ready.set()
        ready.set()  # the server ended before it was ready

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    ok = False
    report = "server not ready"
    try:
        if ready.wait(args.timeout) and url:
            ready_s = time.perf_counter() - spawned
            start = time.perf_counter()
            try:
                with urllib.request.urlopen(url[0], timeout=args.timeout) as response:
                    status, body = response.status, response.read().decode("utf-8", "replace")
            except OSError as exc:
                status, body = None, ""
                report = f"ready in {ready_s:.3f} s; scrape of {url[0]} failed: {exc}"
            else:
                scrape_s = time.perf_counter() - start
                samples = sum(1 for line in body.splitlines() if line.startswith("gpudash_"))
                sys.stdout.write(body)
                ok = status == 200 and samples > 0
                report = (
                    f"ready in {ready_s:.3f} s; scrape {status}, {len(body)} bytes, {samples} gpudash_ samples, "
                    f"{scrape_s:.3f} s"
                )
        elif not url:
            report = f"server not ready within {args.timeout:g} s (exit code {server.poll()})"
    finally:
        if server.poll() is None:
            server.terminate()
        try:
            code = server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            code = server.wait()
        reader.join(timeout=5)
    for line in lines:
        print(line, file=sys.stderr)
    print(f"gpu_check_serve: {report}; server exit code {code}", file=sys.stderr)
    return 0 if ok and code == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
