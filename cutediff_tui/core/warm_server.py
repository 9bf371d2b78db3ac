"""Warm compile worker: imports torch and the DSL once, then forks one child per compile.

Run as ``python -m cutediff_tui.core.warm_server INIT_JSON`` inside a toolchain's Python (the
client is :mod:`cutediff_tui.core.warm`). ``INIT_JSON`` holds the overlay ``site``, the
``local_paths`` and ``lineinfo``. The server puts the overlay first on ``sys.path``, sets the
switches some DSL versions read only at import (``CUTE_DSL_LINEINFO``: one server per value),
imports torch, ``cutlass`` and ``cutlass.cute`` and answers ``{"event": "ready"}`` on stdout.

Protocol, one JSON object per line. In on stdin: ``{"job": ID, "request": PATH}`` (a request as
for :mod:`cutediff_tui.core.worker`). Out on stdout: the worker's events tagged with ``job``,
``{"event": "started", "job", "pid"}`` and ``{"event": "exit", "job", "rc", "maxrss_kb"}``. Each
compile runs in a forked child, so the recipe and its helper modules are imported afresh every
time, a crash takes down one compile only, and the server's memory stays what the imports took.
End of stdin (the cutediff process died or let go) kills the children and ends the server.
Standard library only at the top, like the worker.
"""

from __future__ import annotations

import json
import os
import select
import signal
import sys
import time
from pathlib import Path
from typing import Any

from cutediff_tui.core import worker


def rss_kb(pid: int | str = "self") -> int:
    """Resident memory of a process in KiB (0 where /proc is not there)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


class Server:
    """The warm parent: holds the imports, forks children, reports their exits."""

    def __init__(self, init: dict[str, Any]) -> None:
        self.init = init
        self.children: dict[int, str] = {}  # pid -> job
        self.wake_r = self.wake_w = -1
        # stdout is the control channel; anything the imports print goes to stderr instead
        self.ctrl = os.fdopen(os.dup(1), "w", buffering=1)
        os.dup2(2, 1)

    def send(self, event: str, **data: Any) -> None:
        try:
            self.ctrl.write(json.dumps({"event": event, "t": time.monotonic(), **data}) + "\n")
            self.ctrl.flush()
        except OSError:
            os._exit(0)  # nobody reads us any more

    def warm_up(self) -> None:
        t0 = time.monotonic()
        worker.setup_paths(self.init["site"], self.init.get("local_paths", []))
        # read at import by the DSL: the same in every compile (line info: one server per value)
        os.environ["CUTE_DSL_LINEINFO"] = "1" if self.init.get("lineinfo") else "0"
        os.environ["CUTE_DSL_DISABLE_FILE_CACHING"] = "1"
        error = None
        try:
            import torch
            import torch._subclasses.fake_tensor  # noqa: F401
        except Exception as exc:  # recipes that need torch fail in the child with the usual sentence
            error = f"torch: {type(exc).__name__}: {exc}"
        try:
            import cutlass
            import cutlass.cute  # noqa: F401
        except BaseException as exc:  # the child reports the import failure as data
            error = f"{type(exc).__name__}: {exc}"
        self.send("ready", pid=os.getpid(), seconds=round(time.monotonic() - t0, 3), rss_kb=rss_kb(), error=error)

    def fork(self, job: str, request_path: str) -> None:
        pid = os.fork()
        if pid == 0:  # the child: one compile, then exit without running the server's cleanup
            rc = 3
            try:
                rc = self.child(request_path)
            except BaseException:
                rc = 3
            finally:
                try:
                    sys.stdout.flush()
                    sys.stderr.flush()
                except Exception:
                    pass
                os._exit(rc)
        self.children[pid] = job
        self.send("started", job=job, pid=pid)

    def child(self, request_path: str) -> int:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        for fd in (self.wake_r, self.wake_w):
            if fd >= 0:
                os.close(fd)
        worker.die_with_parent(None)
        request = json.loads(Path(request_path).read_text())
        out = Path(request["out_dir"])
        log = os.open(out / "compile.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.close(log)
        sys.stdin.close()
        os.chdir(out)
        worker.set_events(self.ctrl, request.get("job"))
        return worker.run(request, warm=True)

    def reap(self) -> None:
        while self.children:
            try:
                pid, status, usage = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                self.children.clear()
                return
            if pid == 0:
                return
            job = self.children.pop(pid, None)
            rc = os.waitstatus_to_exitcode(status)
            self.send("exit", job=job, rc=rc, maxrss_kb=int(usage.ru_maxrss))

    def serve(self) -> None:
        buf = b""
        stdin = sys.stdin.fileno()
        # a child's exit wakes the loop at once (SIGCHLD through a wake-up pipe), so its end is
        # reported without waiting for a poll period
        self.wake_r, wake_w = os.pipe()
        os.set_blocking(self.wake_r, False)
        os.set_blocking(wake_w, False)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        signal.set_wakeup_fd(wake_w)
        self.wake_w = wake_w
        while True:
            ready, _, _ = select.select([stdin, self.wake_r], [], [], 0.5)
            if self.wake_r in ready:
                try:
                    while os.read(self.wake_r, 4096):
                        pass
                except BlockingIOError:
                    pass
            self.reap()
            if stdin not in ready:
                continue
            chunk = os.read(stdin, 65536)
            if not chunk:  # the client is gone
                self.stop()
                return
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                try:
                    msg = json.loads(line)
                except ValueError:
                    continue
                if msg.get("request"):
                    self.fork(str(msg.get("job")), msg["request"])

    def stop(self) -> None:
        for pid in list(self.children):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        self.reap()


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    init = json.loads(argv[0])
    server = Server(init)
    server.warm_up()
    server.serve()
    return 0


if __name__ == "__main__":
    sys.exit(main())
