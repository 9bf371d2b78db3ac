"""Inter-process file locks and atomic writes for the cache.

Locks come from :mod:`filelock` (``flock`` on POSIX, ``msvcrt.locking`` on Windows), so the
module imports on every platform: viewing and reporting work on macOS and Windows too.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

from filelock import FileLock, Timeout


class LockWaitCancelled(Exception):
    """``cancel`` was set while :func:`file_lock` waited for another holder."""


#: Seconds between two looks at ``cancel`` while another process holds the lock.
CANCEL_POLL_S = 0.2


@contextlib.contextmanager
def file_lock(
    path: Path, cancel: threading.Event | None = None, cancelled: Callable[[], BaseException] = LockWaitCancelled
) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (created if missing) for the block.

    The operating system drops the lock when the holder dies, even by ``kill -9``. While another
    holder keeps it, the wait gives way to ``cancel``: ``cancelled()`` is raised, so that Ctrl-C of
    a watch is not held up by a compile of the same build in another cutediff.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(path))
    if cancel is None:
        with lock:
            yield
        return
    while True:
        if cancel.is_set():
            raise cancelled()
        try:
            lock.acquire(timeout=CANCEL_POLL_S)
            break
        except Timeout:
            continue
    try:
        yield
    finally:
        lock.release()


def atomic_write(path: Path, data: bytes | str) -> None:
    """Write ``data`` to ``path`` through a temporary file and a rename; a character device
    (``-o /dev/null``, a terminal; not a link to one) is written as it is."""
    from .files import is_char_device

    if is_char_device(path):
        with open(path, "wb" if isinstance(data, bytes) else "w") as fh:
            fh.write(data)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}-{threading.get_ident()}")
    mode = "wb" if isinstance(data, bytes) else "w"
    with open(tmp, mode) as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def pid_alive(pid: int) -> bool:
    """Whether a process with this id exists (this process counts as alive)."""
    if pid == os.getpid():
        return True
    if os.name == "nt":  # os.kill(pid, 0) would terminate the process on Windows
        return _pid_alive_windows(pid)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _pid_alive_windows(pid: int) -> bool:
    import ctypes

    kernel32 = ctypes.windll.kernel32  # type: ignore[attr-defined]
    handle = kernel32.OpenProcess(0x1000, False, pid)  # PROCESS_QUERY_LIMITED_INFORMATION
    if not handle:
        return kernel32.GetLastError() == 5  # ERROR_ACCESS_DENIED: it exists
    try:
        code = ctypes.c_ulong()
        kernel32.GetExitCodeProcess(handle, ctypes.byref(code))
        return code.value == 259  # STILL_ACTIVE
    finally:
        kernel32.CloseHandle(handle)
