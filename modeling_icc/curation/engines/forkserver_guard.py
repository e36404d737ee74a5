"""Imported first by a sharded job's forkserver, for its side effect: the server dies with the job.

multiprocessing's forkserver notices that the process that started it has ended only in its serving loop,
which it enters after importing its preload modules (this package and torch: seconds, more on a loaded
machine). A job killed while its workers start would leave the server, and the resource tracker it
keeps open, running for that long. Importing this module first makes the kernel end the server with the
job's main process (:func:`~modeling_icc.utils.parent_death.die_with_parent`; the job names itself in
``PARENT_ENV``, so that a job already gone is noticed too); it imports nothing heavy.
"""

import os

from ...utils.parent_death import PARENT_ENV, die_with_parent

die_with_parent(int(os.environ.pop(PARENT_ENV, "0")) or None)
