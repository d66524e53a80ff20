"""The notebook displays (``_repr_html_``), checked headless: the HTML is
parsed and must hold the right names, numbers and units, escape every name
that comes from the model, and label a pool's tokens as a count or say that
a figure is a fraction."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest
import sympy as sp

import qmodels as qm
from qmodels._format import fmt


class _Doc(HTMLParser):
    """The text of an HTML fragment, and its tables as lists of rows of cell
    texts (header row included)."""

    def __init__(self, markup: str):
        super().__init__(convert_charrefs=True)
        self.text: list[str] = []
        self.tables: list[list[list[str]]] = []
        self.captions: list[str] = []
        self._cell: list[str] | None = None
        self._in_caption = False
        self._caption_at: list[int] = []
        self.feed(markup)
        self.close()

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = []
        elif tag == "caption":
            self._in_caption = True
            self.captions.append("")
            self._caption_at.append(len(self.tables) - 1)

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self.tables[-1][-1].append("".join(self._cell).strip())
            self._cell = None
        elif tag == "caption":
            self._in_caption = False

    def handle_data(self, data):
        self.text.append(data)
        if self._cell is not None:
            self._cell.append(data)
        if self._in_caption:
            self.captions[-1] += data

    @property
    def _caption_of(self) -> dict:
        return dict(zip(self._caption_at, self.captions, strict=True))

    @property
    def all_text(self) -> str:
        return "".join(self.text)

    def table(self, caption: str) -> list[list[str]]:
        """The table whose caption starts with ``caption``."""
        for i, cap in self._caption_of.items():
            if cap.startswith(caption):
                return self.tables[i]
        raise AssertionError(f"no table captioned {caption!r}; captions {self.captions}")

    def row(self, caption: str, first: str) -> dict:
        """One row of a captioned table as header -> cell; ``first`` is the
        row label with or without the bottleneck mark `` *``."""
        tab = self.table(caption)
        for r in tab[1:]:
            if r[0] in (first, first + " *"):
                return dict(zip(tab[0], r, strict=True))
        raise AssertionError(f"no row {first!r} in {caption!r}: {tab}")


def _pool_net(station="b", name="demo"):
    return qm.Network(
        [qm.Queue("a", 0.1), qm.Queue(station, 0.2), qm.Delay("z", 1.0)],
        [qm.Closed("c", 4, routing={"z": {"a": 1}, "a": {station: 1}, station: {"z": 1}})],
        pools=[qm.TokenPool("buf", 2, "a", station)], name=name)


def _visits_net(station="disk"):
    return qm.Network(
        [qm.Delay("users", 2.0), qm.Queue("cpu", 0.01, servers=2), qm.Queue(station, 0.025)],
        [qm.Closed("tx", 5, think_time=1.0, visits={"users": 1, "cpu": 1, station: 0.5}),
         qm.Open("web", 3.0, visits={"cpu": 2, station: 1})],
        pools=[qm.TokenPool("slot", 3, "cpu", station, path=("cpu", station),
                            classes=("tx",))])


# -- Network ---------------------------------------------------------------------

def test_network_display_lists_stations_classes_demands_and_pools():
    net = _visits_net()
    doc = _Doc(net._repr_html_())
    cpu = doc.row("stations", "cpu")
    assert cpu["kind"] == "queue" and cpu["servers"] == "2" and cpu["S [s]"] == "0.01"
    assert doc.row("stations", "users")["servers"] == "inf"
    assert doc.row("classes", "tx")["workload"] == "N = 5, Z = 1 s"
    assert doc.row("classes", "web")["workload"] == "lambda = 3 1/s"
    d = doc.row("demands", "tx")
    assert d["disk"] == fmt(0.5 * 0.025) and d["cpu"] == "0.01" and d["users"] == "2"
    assert doc.row("demands", "web")["cpu"] == "0.02"
    assert "D [s]" in doc.table("demands")[0]
    slot = doc.row("token pools", "slot")
    assert slot == {"pool": "slot", "tokens": "3", "acquire": "cpu", "release": "disk",
                    "held path": "cpu -> disk", "classes": "tx"}
    assert "count" in doc.captions[-1]


def test_network_display_without_pools_has_no_pool_table():
    net = qm.Network([qm.Queue("cpu", 0.01)], [qm.Closed("tx", 2, visits={"cpu": 1})])
    doc = _Doc(net._repr_html_())
    assert not any(c.startswith("token pools") for c in doc.captions)


def test_network_display_escapes_names():
    markup = _pool_net(station="<b>", name="a&b")._repr_html_()
    assert "<b><" not in markup and "&lt;b&gt;" in markup and "a&amp;b" in markup
    doc = _Doc(markup)
    assert doc.row("stations", "<b>")["kind"] == "queue"
    assert doc.row("token pools", "buf")["release"] == "<b>"
    assert "<b>" in doc.table("demands")[0]


# -- Result (decomposition, CTMC, MVA) ---------------------------------------------------

@pytest.mark.parametrize("solver", [qm.decompose, qm.ctmc])
def test_result_display_shows_pools_with_units(solver):
    r = solver(_pool_net())
    doc = _Doc(r._repr_html_())
    d = r.info["pools"]["buf"]
    row = doc.row("token pools", "buf")
    assert row["tokens"] == "2"
    assert row["tokens held (mean count)"] == fmt(d["held"])
    assert row["U = X H / tokens (fraction)"] == fmt(d["held"] / 2)
    assert row["jobs waiting (mean count)"] == fmt(d["waiting"])
    # H from Little's law: held / X at the acquire station
    h = d["held"] / r.X["a"]
    assert float(row["H [s]"]) == pytest.approx(h, rel=1e-5)
    assert doc.row("classes", "c")["X [1/s]"] == fmt(r.X["c"])
    st = doc.row("stations", "b")
    assert st["U"] == fmt(r.U["b"]) and st["R [s]"] == fmt(r.R["b"])
    assert {"D [s]", "X [1/s]", "R [s]"} <= set(doc.table("stations")[0])
    assert "bottleneck: " + ", ".join(r.bottleneck) in doc.all_text


def test_result_display_without_pools_and_escaping():
    net = qm.Network([qm.Queue("<i>cpu", 0.01), qm.Queue("disk", 0.02)],
                     [qm.Closed("t&x", 3, visits={"<i>cpu": 1, "disk": 1})], name="<script>")
    r = qm.mva(net)
    markup = r._repr_html_()
    assert "<script>" not in markup and "&lt;script&gt;" in markup
    assert "<i>cpu" not in markup
    doc = _Doc(markup)
    assert not any(c.startswith("token pools") for c in doc.captions)
    assert doc.row("classes", "t&x")["workload"] == "N=3"
    assert doc.row("stations", "disk")["U"] == fmt(r.U["disk"])
    assert doc.row("stations", "<i>cpu")["X [1/s]"] == fmt(r.X["<i>cpu"])


def test_result_display_of_a_symbolic_result():
    S = sp.Symbol("S", positive=True)
    net = qm.Network([qm.Queue("cpu", S), qm.Delay("z", 1)],
                     [qm.Closed("c", 2, visits={"cpu": 1, "z": 1})])
    r = qm.mva_symbolic(net)
    doc = _Doc(r._repr_html_())
    assert doc.row("classes", "c")["X [1/s]"] == str(r.X["c"])
    assert "S" in doc.row("stations", "cpu")["D [s]"]


# -- SimResult -------------------------------------------------------------------

@pytest.fixture(scope="module")
def sim():
    return qm.simulate(_pool_net(station="<b>"), seed=3, horizon=300.0, replications=3)


def test_sim_display_shows_intervals_percentiles_and_pools(sim):
    doc = _Doc(sim._repr_html_())
    head = doc.table("classes")[0]
    assert head[:4] == ["class", "workload", "X [1/s]", "R [s]"]
    assert {"R p50 [s]", "R p95 [s]", "R p99 [s]"} <= set(head)
    c = doc.row("classes", "c")
    assert c["X [1/s]"] == repr(sim.X["c"]).split(" (")[0] and " ± " in c["X [1/s]"]
    assert c["R p95 [s]"] == repr(sim.percentiles["c"][95]).split(" (")[0]
    b = doc.row("stations", "<b>")
    assert b["U"] == repr(sim.U["<b>"]).split(" (")[0]
    row = doc.row("token pools", "buf")
    u = sim.pools["buf"]["U"]
    assert row["tokens"] == "2"
    assert row["U = in use / tokens (fraction)"] == repr(u).split(" (")[0]
    held_mean = float(row["tokens in use (mean count)"].split(" ± ")[0])
    assert held_mean == pytest.approx(2 * u.mean, rel=1e-3)
    assert 0 <= u.mean <= 1 and 0 <= held_mean <= 2
    assert row["jobs waiting (mean count)"] == repr(sim.pools["buf"]["Q"]).split(" (")[0]
    assert "events in" in doc.all_text and "bottleneck: " in doc.all_text
    # the text form says the same: the share of tokens in use is a fraction
    assert "pool buf: tokens in use (fraction) " + repr(u).split(" (")[0] in repr(sim)


def test_sim_display_escapes_names(sim):
    markup = sim._repr_html_()
    assert "<b><" not in markup.replace("<b>sim", "") and "&lt;b&gt;" in markup


# -- BottleneckRegions ---------------------------------------------------------------

def test_bottleneck_regions_display_has_latex_bounds_and_decimals():
    B = sp.Symbol("B", positive=True)
    net = qm.Network([qm.Queue("<buf>", sp.Rational(1, 100), servers=B),
                      qm.Queue("dma", sp.Rational(7, 3000))],
                     [qm.Closed("p", 4, visits={"<buf>": 1, "dma": 1})])
    r = qm.bottleneck_regions(net, B, domain=(1, sp.oo))
    markup = r._repr_html_()
    assert "<buf>" not in markup and "&lt;buf&gt;" in markup
    doc = _Doc(markup)
    tab = doc.tables[0]
    assert tab[0] == ["B from", "B to", "winner", "$D_{\\max}$"]
    assert tab[1] == ["$1$", "$\\frac{30}{7}$ ≈ 4.28571", "<buf>", "$\\frac{1}{100 B}$"]
    assert tab[2] == ["$\\frac{30}{7}$ ≈ 4.28571", "$\\infty$", "dma", "$\\frac{7}{3000}$"]
    assert "switch at $B^* = \\frac{30}{7}$ ≈ 4.28571: <buf> → dma" in doc.all_text
    # the text form is unchanged
    assert "[1, 30/7 (~4.28571)]" in repr(r)
