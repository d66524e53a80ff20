"""Model files: a :class:`~qmodels.model.Network` to YAML or JSON and back.

``save(net, "m.yaml")`` and ``load("m.yaml")`` round-trip every field of a
model: stations of every kind with their service-time distributions, power,
capacity and servers; classes given by visits, routing or demands, with
per-class service times and shapes, think times, reference stations, arrival rates and
inter-arrival distributions; token pools; and symbolic values, written as
expressions that are read back into the same sympy objects (their symbols
and assumptions are listed under ``symbols``).  ``load(save(net)) == net``,
whatever order a mapping's keys come back in (a closed class's reference
station is always written out).

The format (times in seconds, rates per second, power in watts)::

    name: two-tier example                 # optional
    symbols: {S_disk: {positive: true}}    # optional: names expressions may use
    stations:                              # required, non-empty list
      - name: cpu                          # required, unique
        kind: queue                        # delay | queue | ld (load-dependent) | cache
        service: 0.010                     # mean service time per visit (required,
                                           #   unless every class gives its own)
        servers: 4                         # queue only, default 1
        discipline: fcfs                   # queue only: fcfs | ps | prio | prio-pr |
                                           #   lcfs-pr (prio: by class priority)
        capacity: 8                        # optional finite room
        rate_multipliers: [1, 1.8, 2.4]    # ld only: rate with n jobs = a[n-1]/service
        power: {busy: 6.8, idle: 4.0}      # optional (read, write too)
        distribution: {type: erlang, k: 2} # optional service shape; a hyperexponential
                                           #   is {type: hyperexponential, scv: 4} (balanced
                                           #   means) or {..., probs: [0.3, 0.7],
                                           #   rates: [1, 10]} (its branches)
      - name: cache                        # kind: cache, a queue whose service is a
        kind: cache                        #   cache lookup (qmodels.CacheStation)
        service: 0.0001
        cache_capacity: 50                 # items the cache holds
        policy: lru                        # lru | fifo | random (default lru)
        hit: mem                           # where a job goes after a hit, a miss
        miss: disk                         #   (sink: it leaves)
        popularity: [0.5, 0.3, 0.2]        # each item's request probability (sum 1);
                                           #   classes give it the row {mem: h, disk: 1-h}
    classes:                               # required, non-empty list
      - name: tx
        type: closed                       # closed | open
        population: 40                     # closed: non-negative integer
        think_time: 0                      # closed, optional
        reference: cpu                     # closed, optional
        priority: 0                        # optional, 0 = highest (default 0)
        arrival_rate: 2.5                  # open
        interarrival: {type: hyperexponential, scv: 4}   # open, optional; a correlated
                                           #   stream is {type: map, D0: [[..]], D1: [[..]]}
                                           #   (its rate pi D1 1 is the arrival_rate)
        visits: {cpu: 1, disk: 0.27}       # exactly one of visits,
        routing: {cpu: {disk: 1}, ...}     #   routing (open: source/sink rows;
                                           #   {disk: {other_class: 0.3}} switches class),
        demands: {cpu: 0.01}               #   demands
        service: {disk: S_disk}            # optional per-class service times
        distribution: {disk: deterministic}  # optional per-class service shapes
    pools:                                 # optional held resources
      - {name: xnif, tokens: 4, acquire: dma, release: port, classes: [tx],
         path: [dma, port]}                # optional: the held path (visits classes)

The JSON Schema of this format ships with the package
(``qmodels/io/model.schema.json``, printed by ``qmodels schema``); it checks
the structure, and the model's constructors check the values.  Every error
is reported with its path in the file (``classes[0].population``), all at
once, as one :class:`~qmodels.errors.ModelFileError`.

Reading is defensive: a file is read up to :data:`MAX_BYTES` (a larger one
is refused, not truncated; a named pipe that stays silent for
:data:`PIPE_WAIT` seconds is refused, not waited on), must be UTF-8 text, may nest at most
:data:`MAX_DEPTH` levels, may not repeat a key in a mapping, and may not put
control or invisible format characters in names; names are compared after
Unicode NFC normalisation (``"e\\u0301"`` and ``"\\u00e9"`` are one name).
Expressions are parsed by a small arithmetic grammar (numbers, declared
symbols, ``+ - * / **``, ``sqrt exp log Min Max``), never evaluated as code.
YAML is read with YAML 1.2 floats (``1e-3`` is a number, as in JSON) and
written so that it reads back the same.

``save`` and ``load`` choose the format by suffix: ``.yaml``/``.yml``,
``.json``, and JMT's ``.jmva`` (both ways) and ``.jsimg`` (write only), see
:mod:`qmodels.io.jmt`; ``"-"`` is standard input or output.  On the command
line, ``qmodels check MODEL...`` reports every error of each file and
``qmodels convert SOURCE TARGET`` converts between the formats (see
:func:`register_cli`).

The parts live in their own modules: :mod:`qmodels.io.expressions` (the
expression grammar), :mod:`qmodels.io.decode` (plain data -> Network, with
every error at once) and :mod:`qmodels.io.encode` (Network -> plain data);
this module holds the reading of text (sizes, encodings, YAML/JSON), the
file functions and the command line, and re-exports the others' names.
"""

from __future__ import annotations

import functools
import io
import json
import os
import re
import select
import stat
import sys
from pathlib import Path

from ..errors import InvalidValueError, ModelFileError
from ..model.network import Network
from .decode import MAX_DEPTH, _Errors, _join, _lossy_number, from_dict
from .encode import to_dict
from .expressions import MAX_EXPRESSION, parse_expression  # noqa: F401 (re-exported)

__all__ = ["load", "loads", "save", "dumps", "from_dict", "to_dict", "parse",
           "parse_expression", "register_cli", "MAX_BYTES", "MAX_DEPTH"]

#: Largest model file read, in bytes (10 MiB); a larger file is refused.
MAX_BYTES = 10 * 1024 * 1024
#: Most values (after YAML alias expansion) in one file.
MAX_NODES = 1_000_000
#: Seconds a named pipe (FIFO) may stay silent before reading gives up: a
#: pipe nobody writes to is refused instead of waiting for ever.
PIPE_WAIT = 10.0

# ---------------------------------------------------------------------------
# from text to plain data: sizes, encodings, duplicate keys, depth
# ---------------------------------------------------------------------------

def _with_yaml12_floats(base):
    """A subclass of a PyYAML loader or dumper that also reads ``1e-3``
    (no dot: a string in YAML 1.1) as a number, as YAML 1.2 and JSON do; the
    dumper then quotes a string such as ``"0E0"`` so that it reads back as
    a string."""
    import re

    cls = type(f"_{base.__name__}12", (base,), {})
    cls.yaml_implicit_resolvers = {k: list(v) for k, v in base.yaml_implicit_resolvers.items()}
    cls.add_implicit_resolver(
        "tag:yaml.org,2002:float",
        re.compile(r"^[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?[eE][-+]?[0-9]+$"),
        list("-+0123456789"))
    return cls


@functools.lru_cache(maxsize=2)
def _yaml_loader(fast: bool = True):
    """The safe loader with YAML 1.2 floats: libyaml's (``CSafeLoader``,
    the same safe constructors and resolvers over a parser in C: ``parse``
    of the two-tier example 6.9 -> 1.2 ms, the median of 200 on the 2-core
    machine, 2026-11-29) when
    PyYAML was built with it and ``fast``, else the pure-Python one.
    :func:`parse` reads a text that libyaml refuses again with the Python
    loader, whose errors it reports (the same on every install)."""
    import yaml

    base = getattr(yaml, "CSafeLoader", None) if fast else None
    return _with_yaml12_floats(base or yaml.SafeLoader)


@functools.lru_cache(maxsize=1)
def _yaml_dumper():
    import yaml

    return _with_yaml12_floats(yaml.SafeDumper)


_INT, _FLOAT = "tag:yaml.org,2002:int", "tag:yaml.org,2002:float"
#: What YAML 1.2 and JSON read alike: a plain decimal number (or .inf/.nan).
_PLAIN_NUMBER = re.compile(r"[-+]?(?:(?:[1-9][0-9]*|0)(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?"
                           r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)")


def _yaml11_number(text: str, value) -> str:
    """Why a plain YAML number must be refused, or "": YAML 1.1 forms that
    YAML 1.2 and JSON read otherwise or not at all (``1:30`` is 90 in base
    60, ``010`` is octal 8, ``0x10``, ``1_000``), and a non-zero number
    that underflows to 0 (``1e-400``)."""
    if not _PLAIN_NUMBER.fullmatch(text):
        how = ("a base-60 (sexagesimal) number" if ":" in text
               else "an octal number" if re.fullmatch(r"[-+]?0[0-7_]+", text)
               else "a non-decimal number")
        return (f"{text!r} is read by YAML 1.1 as {how}, {value!r}: write the number in "
                "decimal (or quote the text if a name is meant)")
    return _lossy_number(text, value) if isinstance(value, float) else ""


class _Budget:
    def __init__(self):
        self.nodes = 0


def _from_yaml_node(node, path, errs, loader, budget, depth):
    import yaml

    budget.nodes += 1
    if budget.nodes > MAX_NODES:
        raise _TooBig(f"more than {MAX_NODES} values (YAML aliases expanding?)")
    if depth > MAX_DEPTH:
        raise _TooDeep(path)
    if isinstance(node, yaml.ScalarNode):
        value = loader.construct_object(node, deep=True)
        if not node.style and node.tag in (_INT, _FLOAT):  # plain: None, or "" (libyaml)
            why = _yaml11_number(node.value, value)
            if why:
                errs.add(path, why)
        return value
    if isinstance(node, yaml.SequenceNode):
        return [_from_yaml_node(n, f"{path}[{i}]", errs, loader, budget, depth + 1)
                for i, n in enumerate(node.value)]
    if isinstance(node, yaml.MappingNode):
        # a key written in this mapping overrides one merged in by
        # ``<<: *anchor`` (YAML merge key); only a key written twice here is
        # a duplicate
        own = {id(k) for k, _ in node.value if k.tag != "tag:yaml.org,2002:merge"}
        loader.flatten_mapping(node)
        out, own_keys = {}, set()
        for knode, vnode in node.value:
            if not isinstance(knode, yaml.ScalarNode):
                errs.add(path, "a mapping key must be a plain value "
                               f"(line {knode.start_mark.line + 1})")
                continue
            key = loader.construct_object(knode, deep=True)
            key = key if isinstance(key, str) else str(key)
            kpath = _join(path, key)
            if id(knode) in own:
                if key in own_keys:
                    errs.add(kpath, f"duplicate key {key!r} (line {knode.start_mark.line + 1})")
                    continue
                own_keys.add(key)
            out[key] = _from_yaml_node(vnode, kpath, errs, loader, budget, depth + 1)
        return out
    raise _TooBig(f"unexpected YAML node {type(node).__name__}")


class _TooDeep(Exception):
    pass


class _TooBig(Exception):
    pass


class _Pairs(list):
    """A JSON object as its list of (key, value) pairs, so duplicates show."""


def _from_json(obj, path, errs, depth):
    if depth > MAX_DEPTH:
        raise _TooDeep(path)
    if isinstance(obj, _Pairs):
        out = {}
        for k, v in obj:
            kpath = _join(path, k)
            if k in out:
                errs.add(kpath, f"duplicate key {k!r}")
                continue
            out[k] = _from_json(v, kpath, errs, depth + 1)
        return out
    if isinstance(obj, list):
        return [_from_json(v, f"{path}[{i}]", errs, depth + 1) for i, v in enumerate(obj)]
    return obj


def parse(text: str, *, fmt: str = "yaml", source: str = "model"):
    """Plain data (dicts, lists, str, numbers) from YAML or JSON text, with
    duplicate keys, excessive nesting and syntax errors reported as one
    :class:`ModelFileError` (never a traceback)."""
    import yaml

    errs = _Errors()
    try:
        if fmt == "json":
            try:
                # a number that underflows stays text, for _value to refuse
                raw = json.loads(text, object_pairs_hook=_Pairs, parse_float=lambda t: (
                    t if _lossy_number(t, float(t)) else float(t)))
            except json.JSONDecodeError as e:
                raise ModelFileError([(f"line {e.lineno}, column {e.colno}",
                                       f"not valid JSON: {e.msg}")], source) from None
            data = _from_json(raw, "", errs, 0)
        else:
            loader = None
            try:
                try:
                    loader = _yaml_loader()(text)
                    node = loader.get_single_node()
                except yaml.YAMLError:
                    # the error as the Python loader words and places it
                    if loader is not None:
                        loader.dispose()
                    loader = _yaml_loader(False)(text)
                    node = loader.get_single_node()
                data = (None if node is None
                        else _from_yaml_node(node, "", errs, loader, _Budget(), 0))
            except yaml.reader.ReaderError as e:
                ch = e.character if isinstance(e.character, int) else ord(e.character)
                raise ModelFileError([(f"offset {e.position}", f"not valid YAML/JSON: "
                                       f"character U+{ch:04X} is not allowed")], source) from None
            except yaml.YAMLError as e:
                mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
                where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "(file)"
                problem = getattr(e, "problem", None) or str(e).splitlines()[0]
                raise ModelFileError([(where, f"not valid YAML/JSON: {problem}")],
                                     source) from None
            finally:
                if loader is not None:
                    loader.dispose()
    except (RecursionError, _TooDeep) as e:
        where = str(e) if isinstance(e, _TooDeep) and str(e) else "(file)"
        raise ModelFileError([(where, f"nested deeper than {MAX_DEPTH} levels")],
                             source) from None
    except _TooBig as e:
        raise ModelFileError([("(file)", str(e))], source) from None
    if errs.items:
        raise ModelFileError(errs.sorted(), source)
    return data


def loads(text: str, *, source: str = "model", format: str = "yaml") -> Network:
    """A Network from YAML (default; a superset of JSON) or JSON text."""
    if format not in ("yaml", "json"):
        raise InvalidValueError(f"format must be 'yaml' or 'json', got {format!r}")
    return from_dict(parse(text, fmt=format, source=source), source=source)


def _read(path) -> tuple[str, str]:
    """(text, source name) of a file or of standard input (``"-"``), read
    up to MAX_BYTES + 1 bytes."""
    is_stdin = str(path) == "-"
    source = "<stdin>" if is_stdin else str(path)
    try:
        if is_stdin:
            stream = getattr(sys.stdin, "buffer", None)
            data = stream.read(MAX_BYTES + 1) if stream is not None else \
                sys.stdin.read(MAX_BYTES + 1).encode("utf-8", "surrogateescape")
        elif stat.S_ISFIFO(os.stat(path).st_mode):
            data = _read_pipe(path, MAX_BYTES + 1)
        else:
            with open(path, "rb") as f:
                data = f.read(MAX_BYTES + 1)
    except OSError as e:
        raise ModelFileError([("(file)", f"cannot read file: {e.strerror or e}")],
                             source) from None
    if len(data) > MAX_BYTES:
        raise ModelFileError([("(file)", f"larger than the {MAX_BYTES // (1024 * 1024)} MiB "
                                         "limit of model files (reading stopped there)")],
                             source)
    nul = data.find(b"\0")
    if nul >= 0:
        raise ModelFileError([("(file)", f"binary data (a NUL byte at offset {nul}): not a "
                                         "YAML/JSON text file")], source)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise ModelFileError([("(file)", f"not UTF-8 text: byte 0x{data[e.start]:02x} at offset "
                                         f"{e.start}")], source) from None
    return text, source


def _read_pipe(path, limit: int) -> bytes:
    """Up to ``limit`` bytes of a named pipe, opened without blocking so
    that a pipe with no writer, or a writer that falls silent, is refused
    after :data:`PIPE_WAIT` seconds instead of hanging the reader."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        chunks, size = [], 0
        while size < limit:
            if not poller.poll(PIPE_WAIT * 1000):
                raise OSError(f"nothing arrived from this pipe in {PIPE_WAIT:g} s "
                              "(no writer?)")
            try:
                chunk = os.read(fd, min(1 << 16, limit - size))
            except BlockingIOError:
                continue
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def load(path) -> Network:
    """Read a model file: ``.json`` as JSON, ``.jmva`` as JMT's JMVA XML
    (:func:`qmodels.io.jmt.load_jmva`), anything else (``.yaml``, ``.yml``) as
    YAML; ``"-"`` reads standard input (YAML, which accepts JSON too).

    Raises
    ------
    ModelFileError
        Every error of the file, each with its path, at once.
    """
    if str(path).lower().endswith(".jmva"):
        from .jmt import load_jmva

        return load_jmva(path)
    text, source = _read(path)
    fmt = "json" if str(path).lower().endswith(".json") else "yaml"
    return from_dict(parse(text, fmt=fmt, source=source), source=source)



def dumps(net: Network, format: str = "yaml") -> str:
    """The model file of ``net`` as YAML (default) or JSON text."""
    data = to_dict(net)
    if format == "json":
        return json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    if format != "yaml":
        raise InvalidValueError(f"format must be 'yaml' or 'json', got {format!r}")
    import yaml

    buf = io.StringIO()
    yaml.dump(data, buf, Dumper=_yaml_dumper(), sort_keys=False, allow_unicode=True,
              default_flow_style=None, width=100)
    return buf.getvalue()


_SUFFIXES = {".yaml": "yaml", ".yml": "yaml", ".json": "json", ".jmva": "jmva",
             ".jsimg": "jsimg"}


def _format_of(path, default=None) -> str:
    if str(path) == "-":
        return default or "yaml"
    fmt = _SUFFIXES.get(Path(str(path)).suffix.lower())
    if fmt is None:
        raise InvalidValueError(f"cannot tell the format of {str(path)!r} from its suffix: use "
                         f"{', '.join(_SUFFIXES)}")
    return fmt


def save(net: Network, path, *, format: str | None = None, drop=()) -> None:
    """Write ``net`` to a file whose format its suffix names: ``.yaml`` /
    ``.yml`` or ``.json`` model files (``load(path) == net``), or JMT's
    ``.jmva`` / ``.jsimg`` (:mod:`qmodels.io.jmt`, which refuses what JMT cannot
    express).  ``"-"`` writes to standard output (YAML unless ``format``
    says otherwise).  ``drop`` names features a JMT export may leave out
    rather than refuse (``("power",)``; the file says what it dropped);
    model files keep everything and drop nothing."""
    if not isinstance(net, Network):
        raise TypeError(f"save() needs a qmodels Network, got {type(net).__name__}")
    fmt = format or _format_of(path)
    if fmt in ("jmva", "jsimg"):
        from . import jmt

        text = jmt.to_jmva(net, drop=drop) if fmt == "jmva" else jmt.to_jsimg(net, drop=drop)
    else:
        text = dumps(net, fmt)
    if str(path) == "-":
        sys.stdout.write(text)
        return
    Path(path).write_text(text, encoding="utf-8")


# ---------------------------------------------------------------------------
# command line: qmodels check / qmodels convert
# ---------------------------------------------------------------------------

def _report(e) -> int:
    from ..errors import QModelsError

    if isinstance(e, ModelFileError):
        print(f"error: {e}", file=sys.stderr)
    elif isinstance(e, QModelsError):
        print(f"error: {type(e).__name__}: {e}", file=sys.stderr)
    else:
        print(f"error: {e}", file=sys.stderr)
    return 2


def _cmd_check(args) -> int:
    status = 0
    for path in args.models:
        try:
            net = load(path)
        except ModelFileError as e:
            status = _report(e)
            continue
        kinds = "closed" if net.is_closed else "open" if net.is_open else "mixed"
        print(f"{path}: ok ({len(net.stations)} stations, {len(net.classes)} {kinds} "
              f"class{'es' if len(net.classes) != 1 else ''}"
              + (f", {len(net.pools)} pools" if net.pools else "") + ")")
    return status


def _cmd_convert(args) -> int:
    from ..errors import QModelsError

    try:
        net = load(args.source)
        save(net, args.target, format=args.to, drop=tuple(args.drop or ()))
    except (QModelsError, ValueError, OSError) as e:
        return _report(e)
    return 0


def register_cli(sub) -> None:
    """Add ``qmodels check`` (validate model files) and ``qmodels convert``
    (between YAML, JSON, JMVA and JSIMg) to an argparse subparsers object."""
    c = sub.add_parser("check", help="validate model files, reporting every error",
                       description="Load each model file and report every error with its path "
                                   "(exit status 2 if any file has errors).")
    c.add_argument("models", nargs="+", metavar="MODEL", help="model file, or - for stdin")
    c.set_defaults(func=_cmd_check)
    v = sub.add_parser("convert", help="convert a model between YAML, JSON, JMVA and JSIMg",
                       description="Read SOURCE (.yaml, .yml, .json, .jmva, or - for stdin) "
                                   "and write TARGET in the format its suffix names (.yaml, "
                                   ".yml, .json, .jmva, .jsimg; - for stdout).")
    v.add_argument("source", metavar="SOURCE")
    v.add_argument("target", metavar="TARGET")
    v.add_argument("--to", choices=["yaml", "json", "jmva", "jsimg"],
                   help="output format (default: from TARGET's suffix; YAML for -)")
    v.add_argument("--drop", action="append", choices=["power"],
                   help="let a JMT export leave this feature out (noted in the file) "
                        "instead of refusing the model; repeatable")
    v.set_defaults(func=_cmd_convert)
