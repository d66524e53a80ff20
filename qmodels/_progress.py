"""Progress bars for long calls (:mod:`tqdm`: a widget in an interactive
Jupyter front end, a text bar in a terminal or a headless kernel).

One rule for every long call (``qm.sweep``, ``qm.simulate``, a large exact
multi-class lattice, a case calibration): ``progress=False`` or the
environment variable ``CI`` (any non-empty value) shows nothing;
``progress=True`` shows a bar; ``progress=None`` (the default) shows one in a
terminal or a Jupyter kernel only, and then after ``delay`` seconds, so quick
calls never flash one.  Without tqdm (an optional dependency) there
is no bar.

A kernel run headless (``jupyter nbconvert --execute``, nbclient,
papermill: nobody at a front end) gets a text bar that stays on its final
line, never a widget: a widget's comm traffic can stall the executing
client (jupyter/nbclient issue #312), and a saved notebook keeps only the
widget's text fallback as it was when first shown ("simulating: 70%"),
where the text bar's stream output ends at its final state.
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


def interactive_front_end() -> bool:
    """Whether this process is a Jupyter kernel with someone at a front end
    that can show widgets: the cell running now was sent by a client that
    accepts ``input()`` (``allow_stdin``: JupyterLab, Notebook, VS Code).
    A headless run (``nbconvert --execute``, nbclient, papermill) sends its
    cells with ``allow_stdin`` false (the Jupyter messaging protocol,
    ``execute_request``), and so does a kernel outside any request: False.
    ``QMODELS_NO_WIDGETS=1`` also says False; ``QMODELS_WIDGETS=1`` says
    True in any kernel (a front end that shows widgets but not input)."""
    if os.environ.get("QMODELS_NO_WIDGETS", "") not in ("", "0"):
        return False
    if not in_notebook():
        return False
    if os.environ.get("QMODELS_WIDGETS", "") not in ("", "0"):
        return True
    try:
        shell = sys.modules["IPython"].get_ipython()
        return bool(getattr(getattr(shell, "kernel", None), "_allow_stdin", False))
    except Exception:  # pragma: no cover - IPython internals
        return False


def bar(progress, total, desc: str, unit: str = "it", delay: float = 2.0):
    """A :mod:`tqdm` bar of ``total`` steps (None: unknown), or None when
    silenced (see the module docstring)."""
    if os.environ.get("CI") or progress is False:
        return None
    kernel = in_notebook()
    if progress is None and not (kernel or sys.stderr.isatty()):
        return None
    try:
        if kernel and not interactive_front_end():
            # headless kernel: a text bar whose last line is its final state
            from tqdm.std import tqdm

            return tqdm(total=total, desc=desc, unit=unit, file=sys.stderr,
                        delay=0.0 if progress is True else delay, leave=True,
                        mininterval=1.0)
        from tqdm.auto import tqdm
    except ImportError:  # tqdm is optional (extras "sim"/"dist"): no bar without it
        return None
    return tqdm(total=total, desc=desc, unit=unit, delay=0.0 if progress is True else delay,
                leave=False)
