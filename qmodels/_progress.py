"""Progress bars for long calls (:mod:`tqdm.auto`: a widget in Jupyter, a
text bar in a terminal).

One rule for every long call (``qm.sweep``, ``qm.simulate``, a large exact
multi-class lattice, a case calibration): ``progress=False`` or the
environment variable ``CI`` (any non-empty value) shows nothing;
``progress=True`` shows a bar; ``progress=None`` (the default) shows one in a
terminal or a Jupyter kernel only, and then after ``delay`` seconds, so quick
calls never flash one.  Without tqdm (an optional dependency) there
is no bar.
"""

from __future__ import annotations

import os
import sys


def in_notebook() -> bool:
    """Whether this process is a Jupyter (IPython) kernel."""
    ip = sys.modules.get("IPython")
    if ip is None:
        return False
    try:
        shell = ip.get_ipython()
    except Exception:  # pragma: no cover - IPython internals
        return False
    return shell is not None and "IPKernelApp" in getattr(shell, "config", {})


def bar(progress, total, desc: str, unit: str = "it", delay: float = 2.0):
    """A :mod:`tqdm.auto` bar of ``total`` steps (None: unknown), or None
    when silenced (see the module docstring)."""
    if os.environ.get("CI") or progress is False:
        return None
    if progress is None and not (in_notebook() or sys.stderr.isatty()):
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:  # tqdm is optional (extras "sim"/"dist"): no bar without it
        return None
    return tqdm(total=total, desc=desc, unit=unit, delay=0.0 if progress is True else delay,
                leave=False)
