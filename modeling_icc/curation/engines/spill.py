"""Arrays kept on disk between the passes of a job, so that what it keeps per row costs no memory."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np

from ...utils.atomic_files import open_work_file


class SpilledArrays:
    """1-D arrays appended one at a time to a file, read back in order as often as needed.

    Iterating reads them anew from the file each time (one array in memory at a time), so
    it can be passed wherever a list of the arrays is read in several passes. The file is opened as the
    work file it is (:func:`~modeling_icc.utils.atomic_files.open_work_file`): never through a link.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._pieces: list[tuple[np.dtype, int]] = []
        open_work_file(path, "wb").close()  # a new file, or an empty one made for it (a locked work file)

    def append(self, values: np.ndarray) -> None:
        values = np.ascontiguousarray(values)
        if values.ndim != 1:
            raise ValueError(f"only 1-D arrays are spilled, got shape {values.shape}")
        with open_work_file(self.path, "ab") as handle:
            handle.write(values.data)
        self._pieces.append((values.dtype, len(values)))

    def __len__(self) -> int:
        return len(self._pieces)

    def __iter__(self) -> Iterator[np.ndarray]:
        with open_work_file(self.path) as handle:
            for dtype, count in self._pieces:
                values = np.fromfile(handle, dtype=dtype, count=count)
                if len(values) != count:
                    raise OSError(f"{self.path} was cut short while the job ran; run the command again")
                yield values
