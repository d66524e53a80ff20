"""The resumable sweep store: a directory of Parquet parts plus
``_sweep.json`` holding the fingerprint of the sweep (model, grid, method,
options, seed).  Each part is written to a temporary file and moved into
place with :func:`os.replace`, so a killed sweep leaves only complete parts.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import uuid
from pathlib import Path

from ..errors import InvalidValueError
from ..model import Network
from .points import _Grid
from .spec import _Spec

STORE_META = "_sweep.json"


# ---------------------------------------------------------------------------
# storage
# ---------------------------------------------------------------------------

def _fingerprint(spec: _Spec, points: _Grid) -> str:
    h = hashlib.sha256()
    m = spec.model
    if isinstance(m, Network):
        h.update(repr((m.name, m.stations, m.classes, m.pools)).encode())
        # the elements stations were built from (not in their repr): their
        # parameters are paths too ("disk.rpm")
        h.update(repr([s.element for s in m.stations]).encode())
    else:
        h.update(f"{getattr(m, '__module__', '')}.{getattr(m, '__qualname__', repr(m))}".encode())
        try:
            h.update(inspect.getsource(m).encode())
        except (OSError, TypeError):
            pass
    h.update(repr((spec.names, spec.method, sorted(spec.options.items(), key=str),
                   spec.seed, spec.report)).encode())
    h.update(repr(points.desc).encode())
    return h.hexdigest()


class _Store:
    """A directory of Parquet parts, each written atomically."""

    def __init__(self, path, fingerprint: str, npoints: int):
        self.dir = Path(path)
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
        except OSError as e:  # a file of that name, a read-only place, ...
            raise InvalidValueError(
                f"store {str(self.dir)!r} cannot be a directory of sweep parts: "
                f"{e.strerror or e}") from None
        meta = self.dir / STORE_META
        for tmp in self.dir.glob(".tmp-*"):
            tmp.unlink(missing_ok=True)   # a part whose writer was killed
        if meta.exists():
            old = json.loads(meta.read_text())
            if old.get("fingerprint") != fingerprint:
                raise InvalidValueError(
                    f"store {str(self.dir)!r} holds a different sweep (model, grid, method, "
                    "options or seed changed): give another store or delete it")
        else:
            if self.parts():
                raise InvalidValueError(
                    f"store {str(self.dir)!r} holds Parquet parts but no {STORE_META}: not a "
                    "sweep store; give another directory")
            _atomic_write(meta, json.dumps({"fingerprint": fingerprint, "points": npoints,
                                            "format": 1}).encode())

    def parts(self):
        return sorted(self.dir.glob("part-*.parquet"))

    def load(self):
        import pandas as pd

        parts = self.parts()
        if not parts:
            return None
        return pd.concat([pd.read_parquet(p) for p in parts], ignore_index=True)

    def write(self, frame):
        first = int(frame["point"].iloc[0])
        name = f"part-{first:012d}-{uuid.uuid4().hex[:8]}.parquet"
        tmp = self.dir / f".tmp-{name}"
        frame.to_parquet(tmp, index=False)
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, self.dir / name)


def _atomic_write(path: Path, data: bytes):
    tmp = path.with_name(f".tmp-{uuid.uuid4().hex}-{path.name}")
    with open(tmp, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
