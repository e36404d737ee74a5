"""The fitted pipeline pieces (length standardizer, score combiner) saved as one tagged JSON file each."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, ClassVar

from ...utils.provenance import write_json


class SavedAsJSON:
    """``save``/``load`` through the class's ``to_dict``/``from_dict``; the ``FORMAT`` tag written in
    ``to_dict`` lets ``from_dict`` refuse another kind of file (``check_format``)."""

    FORMAT: ClassVar[str]

    @classmethod
    def check_format(cls, data: dict) -> None:
        if data.get("format") != cls.FORMAT:
            raise ValueError(f"not a saved {cls.__name__} (format={data.get('format')!r})")

    def save(self, path: str | os.PathLike) -> Path:
        return write_json(path, self.to_dict())

    @classmethod
    def load(cls, path: str | os.PathLike) -> Any:
        return cls.from_dict(json.loads(Path(path).read_text(encoding="utf-8")))
