"""Processes that end with their parent: ``die_with_parent``, for the helper processes of a job."""

from __future__ import annotations

import ctypes
import os
import signal
import sys

#: ``prctl`` option: the signal this process gets when its parent ends (Linux).
PR_SET_PDEATHSIG = 1


#: Environment variable naming the process a helper must die with (set by the process that starts it).
PARENT_ENV = "ICC_DIE_WITH_PID"


def die_with_parent(parent: int | None = None) -> None:
    """Have the kernel SIGKILL this process when its parent process ends, however it ends (Linux only;
    elsewhere nothing). ``parent``: the pid the parent had at this process's start; if it has already
    ended (this process was handed to another parent before the request), this process ends at once."""
    if not sys.platform.startswith("linux"):
        return
    expected = os.getppid() if parent is None else parent
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != expected:
        os._exit(1)
