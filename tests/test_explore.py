"""qm.plot.explore: the TPS curve and the utilisations under sliders, and
the static figure it draws where widgets cannot be shown."""

from __future__ import annotations

import pytest

import qmodels as qm
from qmodels import plot
from qmodels.whatif.paths import apply

pytest.importorskip("matplotlib")


def _net():
    return qm.Network([qm.Queue("cpu", 0.05), qm.Queue("disk", 0.08, servers=2)],
                      [qm.Closed("tx", 30, think_time=2.0, visits={"cpu": 1, "disk": 1})])


SLIDERS = {"tx.population": (1, 60, 1, 20), "disk.service": (0.02, 0.2, 0.01, 0.1)}


def test_without_widgets_it_draws_the_figure_at_the_start_values(monkeypatch):
    import matplotlib.pyplot as plt

    monkeypatch.setattr(plot, "_widgets", lambda: None)
    fig = plot.explore(_net(), SLIDERS)
    left, right = fig.axes
    # the curve is exact MVA of the model with the sliders' start values applied
    line = next(ln for ln in left.get_lines() if ln.get_label() == "exact MVA")
    x, y = line.get_data()
    model = apply(_net(), {"tx.population": 20, "disk.service": 0.1})
    assert x[-1] == 20 and y[-1] == pytest.approx(qm.mva(model).X["tx"], rel=1e-12)
    bars = [p.get_height() for p in right.patches]
    assert bars == pytest.approx([qm.mva(model).U["cpu"], qm.mva(model).U["disk"]])
    plt.close(fig)


def test_in_a_kernel_with_widgets_each_slider_is_a_parameter(monkeypatch):
    widgets = pytest.importorskip("ipywidgets")
    import matplotlib.pyplot as plt

    monkeypatch.setattr(plot, "_widgets", lambda: widgets)
    w = plot.explore(_net(), SLIDERS)
    sliders = [c for c in w.children if isinstance(c, (widgets.IntSlider, widgets.FloatSlider))]
    assert [s.description for s in sliders] == list(SLIDERS)
    assert isinstance(sliders[0], widgets.IntSlider) and sliders[0].value == 20
    sliders[0].value = 40          # moving a slider redraws the model with N = 40
    left = w.result.axes[0]
    x, _ = next(ln for ln in left.get_lines() if ln.get_label() == "exact MVA").get_data()
    assert x[-1] == 40
    plt.close("all")


@pytest.mark.parametrize("sliders, match", [
    ({}, "sliders must map"),
    ({"tx.population": (5, 1)}, "low 5 must be below high 1"),
    ({"tx.population": ("a", 3)}, "finite numbers"),
    ({"nosuch.service": (0.1, 0.2)}, "nosuch"),
])
def test_bad_sliders_are_refused_before_drawing(sliders, match):
    with pytest.raises(qm.ModelError, match=match):
        plot.explore(_net(), sliders)


def _fake_kernel(monkeypatch, allow_stdin):
    """A Jupyter kernel faked: a shell configured by IPKernelApp whose
    current cell came with or without ``allow_stdin``."""
    import IPython

    class Kernel:
        _allow_stdin = allow_stdin

    class Shell:
        config = {"IPKernelApp": {}}
        kernel = Kernel()

    monkeypatch.setattr(IPython, "get_ipython", lambda: Shell())


def test_qmodels_no_widgets_gives_the_static_figure_even_in_a_kernel(monkeypatch):
    pytest.importorskip("ipywidgets")
    _fake_kernel(monkeypatch, allow_stdin=True)
    monkeypatch.delenv("QMODELS_NO_WIDGETS", raising=False)
    monkeypatch.delenv("QMODELS_WIDGETS", raising=False)
    assert plot._widgets() is not None
    monkeypatch.setenv("QMODELS_NO_WIDGETS", "1")
    assert plot._widgets() is None
    fig = plot.explore(_net(), SLIDERS)
    assert len(fig.axes) == 2


def test_a_headless_kernel_gets_the_static_figure_and_a_text_bar(monkeypatch):
    # nbconvert --execute / nbclient / papermill send cells without
    # allow_stdin: no widget (its comm traffic can stall the client), and a
    # progress bar that is text and keeps its final line in the saved output
    pytest.importorskip("ipywidgets")
    tqdm = pytest.importorskip("tqdm")
    from qmodels import _progress

    monkeypatch.delenv("QMODELS_NO_WIDGETS", raising=False)
    monkeypatch.delenv("QMODELS_WIDGETS", raising=False)
    monkeypatch.delenv("CI", raising=False)
    _fake_kernel(monkeypatch, allow_stdin=False)
    assert plot._widgets() is None
    b = _progress.bar(True, 3, "simulating")
    assert isinstance(b, tqdm.std.tqdm) and type(b).__module__ == "tqdm.std" and b.leave
    b.close()
    monkeypatch.setenv("QMODELS_WIDGETS", "1")   # a front end that shows widgets only
    assert plot._widgets() is not None
