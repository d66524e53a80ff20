"""Defects found while planning capacity; each test failed before its fix."""

from __future__ import annotations

import matplotlib
import numpy as np
import pytest
import sympy as sp

import qmodels as qm

matplotlib.use("Agg")


def _net(N=3):
    return qm.Network([qm.Queue("cpu", 0.05), qm.Queue("disk", 0.08, servers=2)],
                      [qm.Closed("tx", N, visits={"cpu": 1, "disk": 1})])


def test_marginal_of_a_convolution_result():
    """qm.marginal took ctmc results only; a convolution result has (or can
    give) the same distribution.  Reference: the CTMC, an independent method."""
    net = _net()
    ref = qm.marginal(qm.ctmc(net), "disk")
    with_m = qm.marginal(qm.convolution(net, marginals=True), "disk")
    without = qm.marginal(qm.convolution(net), "disk")
    np.testing.assert_allclose(with_m, ref, atol=1e-12)
    np.testing.assert_allclose(without, ref, atol=1e-12)
    with pytest.raises(qm.UnsupportedModelError, match="qm.convolution"):
        qm.marginal(qm.mva(net), "disk")


def test_apply_is_exported():
    net = _net()
    assert "apply" in qm.__all__
    assert qm.apply(net, {"tx.population": 7}).classes[0].population == 7


def test_symbolic_result_prints_equations():
    S1, S2 = sp.symbols("S1 S2", positive=True)
    net = qm.Network([qm.Queue("cpu", S1), qm.Queue("disk", S2)],
                     [qm.Closed("tx", 2, visits={"cpu": 1, "disk": 1})])
    text = str(qm.mva_symbolic(net))
    assert not text.startswith("SymbolicResult(")
    # two balanced-form queues, N = 2, by MVA by hand: R(1) = S1 + S2, Q_k(1) = S_k/(S1+S2),
    # R(2) = S1 (1 + Q1) + S2 (1 + Q2) = 2 (S1^2 + S1 S2 + S2^2)/(S1 + S2), X = 2/R(2)
    assert "X[tx] = (S1 + S2)/(S1**2 + S1*S2 + S2**2)" in text
    assert "parameters: S1, S2" in text
    numeric = qm.Network([qm.Queue("cpu", 1), qm.Delay("z", 2)],
                         [qm.Closed("tx", 2, visits={"cpu": 1, "z": 1})])
    # by hand: n=1 R = 1 + 2, Q_cpu = 1/3; n=2 R_cpu = 4/3, R = 10/3, X = 2/(10/3) = 3/5
    text = str(qm.mva_symbolic(numeric))
    assert "X[tx] = 3/5" in text and "R[tx] = 10/3" in text
    assert qm.mva_symbolic(net)._repr_latex_().startswith("$$")


def test_unknown_method_suggests_the_name():
    with pytest.raises(qm.UnsupportedModelError, match="did you mean 'exact'"):
        qm.solve(_net(), method="mva")
    with pytest.raises(qm.UnsupportedModelError, match="did you mean 'schweitzer'"):
        qm.solve(_net(), method="schweizer")
    with pytest.raises(qm.UnsupportedModelError) as e:
        qm.solve(_net(), method="zzz")
    assert "did you mean" not in str(e.value)


def test_curve_plot_draws_bounds_and_n_star():
    """The README promises r.curve.plot() with ABA/BJB bounds and N*."""
    for solver in (qm.mva, qm.convolution):
        ax = solver(_net(20), curve=True).curve.plot()
        labels = [line.get_label() for line in ax.get_lines()]
        assert "exact MVA" in labels and "ABA upper" in labels and "BJB lower" in labels
        assert any(lab.startswith("N* = ") for lab in labels)
        matplotlib.pyplot.close(ax.figure)
