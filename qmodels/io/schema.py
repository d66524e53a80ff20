"""The JSON Schema of model files, and the structural check that uses it.

The schema (``qmodels/io/model.schema.json``, shipped with the package, JSON
Schema draft 2020-12) says what a model file may contain: which keys, of
which type.  It does not say whether a service time is non-negative, whether
a routing row sums to one or whether a name exists: the model's constructors
check those (:mod:`qmodels.model`), so that a model built in Python and one
read from a file obey the same rules.

:func:`validate` runs the validator and turns each of its errors into a
``(path, message)`` pair.  The path comes from the validator's own error
location (``stations[0].service``), and the message is written here from the
failed keyword and the offending value, never by rewording the validator's
English text.

``qmodels schema`` prints the schema (see :func:`register_cli`).
"""

from __future__ import annotations

import functools
import json
import os
import sys
from typing import Any

__all__ = ["schema", "validate", "conforms", "format_path", "register_cli", "SCHEMA_FILE"]

SCHEMA_FILE = "model.schema.json"


@functools.lru_cache(maxsize=1)
def _schema_text() -> str:
    # the file beside this module when the package is on disk (every
    # install but a zip); importlib.resources, which imports zipfile,
    # tempfile and shutil (~10 ms of every `qmodels solve`), otherwise
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), SCHEMA_FILE)
    if os.path.isfile(here):
        with open(here, encoding="utf-8") as f:
            return f.read()
    from importlib import resources

    return resources.files("qmodels.io").joinpath(SCHEMA_FILE).read_text(encoding="utf-8")


def schema() -> dict:
    """The model-file JSON Schema as a dict (a fresh copy each call)."""
    return json.loads(_schema_text())


#: the keywords :func:`_conforms` decides itself; a schema using any other
#: keyword (a key added later) sends every file through jsonschema
_KEYWORDS = frozenset({
    "$schema", "$id", "$defs", "$ref", "title", "description", "type", "required",
    "additionalProperties", "properties", "items", "enum", "const", "minItems",
    "minLength", "pattern", "propertyNames", "if", "then", "else", "allOf", "oneOf",
    "minimum"})

_JSON_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "integer": lambda v: (isinstance(v, int) and not isinstance(v, bool))
    or (isinstance(v, float) and v.is_integer()),
}


def _keywords_known(node) -> bool:
    """Whether every schema object inside ``node`` uses only :data:`_KEYWORDS`
    (``properties`` and ``$defs`` hold names, not keywords)."""
    if isinstance(node, list):
        return all(_keywords_known(n) for n in node)
    if not isinstance(node, dict):
        return True
    for key, sub in node.items():
        if key not in _KEYWORDS:
            return False
        if key in ("properties", "$defs"):
            if not all(_keywords_known(v) for v in sub.values()):
                return False
        elif key not in ("enum", "const", "required") and not _keywords_known(sub):
            return False
    return True


def _conforms(inst, node, root) -> bool:
    """Whether ``inst`` is valid against the schema object ``node`` (JSON
    Schema 2020-12 semantics for the keywords of :data:`_KEYWORDS`; JSON
    equality for ``enum``/``const``, where 1 == 1.0 but True != 1).

    A yes/no decision procedure only: the messages of an invalid file come
    from jsonschema (:func:`validate`).  It exists so that a valid file, the
    common case, is accepted without importing jsonschema, whose format
    checkers take about a second to import (the ``qmodels`` command's start).
    """
    if node is True:
        return True
    if node is False:
        return False
    ref = node.get("$ref")
    if ref is not None:
        target = root
        for part in ref.lstrip("#/").split("/"):
            target = target[part]
        if not _conforms(inst, target, root):
            return False
    t = node.get("type")
    if t is not None:
        types = [t] if isinstance(t, str) else t
        if not any(_JSON_TYPES[x](inst) for x in types):
            return False
    if "enum" in node and not any(_json_equal(inst, v) for v in node["enum"]):
        return False
    if "const" in node and not _json_equal(inst, node["const"]):
        return False
    if isinstance(inst, dict) and not _object_conforms(inst, node, root):
        return False
    if isinstance(inst, list) and not _array_conforms(inst, node, root):
        return False
    if isinstance(inst, str) and not _string_conforms(inst, node):
        return False
    if "if" in node:
        branch = "then" if _conforms(inst, node["if"], root) else "else"
        if branch in node and not _conforms(inst, node[branch], root):
            return False
    if "minimum" in node and isinstance(inst, (int, float)) and not isinstance(inst, bool) \
            and inst < node["minimum"]:
        return False
    if "oneOf" in node and sum(_conforms(inst, sub, root) for sub in node["oneOf"]) != 1:
        return False
    return all(_conforms(inst, sub, root) for sub in node.get("allOf", ()))


def _object_conforms(inst: dict, node, root) -> bool:
    if any(k not in inst for k in node.get("required", ())):
        return False
    props = node.get("properties", {})
    for k, v in inst.items():
        if k in props:
            if not _conforms(v, props[k], root):
                return False
        elif "additionalProperties" in node:
            if not _conforms(v, node["additionalProperties"], root):
                return False
    names = node.get("propertyNames")
    return names is None or all(_conforms(k, names, root) for k in inst)


def _array_conforms(inst: list, node, root) -> bool:
    if len(inst) < node.get("minItems", 0):
        return False
    return "items" not in node or all(_conforms(v, node["items"], root) for v in inst)


def _string_conforms(inst: str, node) -> bool:
    if len(inst) < node.get("minLength", 0):
        return False
    if "pattern" in node:
        import re

        return re.search(node["pattern"], inst) is not None
    return True


def _json_equal(a, b) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_json_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


@functools.lru_cache(maxsize=1)
def _fast_schema():
    """The schema, if :func:`_conforms` understands all of it, else None."""
    s = schema()
    return s if _keywords_known(s) else None


def conforms(data: Any) -> bool:
    """Whether ``data`` is structurally valid, decided without jsonschema
    when the schema uses only keywords that :func:`_conforms` implements
    (else by jsonschema itself)."""
    s = _fast_schema()
    if s is None:
        return not any(True for _ in _validator().iter_errors(data))
    return _conforms(data, s, s)


@functools.lru_cache(maxsize=1)
def _validator():
    import jsonschema

    s = schema()
    cls = jsonschema.validators.validator_for(s)
    cls.check_schema(s)
    return cls(s)


def format_path(parts, *, nested: bool = False) -> str:
    """``["stations", 0, "service"]`` -> ``"stations[0].service"``.

    A key of letters, digits, ``_`` and ``-`` is written after a dot,
    any other key in brackets (``routing['db 1']``)."""
    out = ""
    for p in parts:
        if isinstance(p, int):
            out += f"[{p}]"
        else:
            key = str(p)
            plain = bool(key) and all(ch.isalnum() or ch in "_-" for ch in key)
            if plain:
                out += f".{key}" if (out or nested) else key
            else:
                out += f"[{key!r}]"
    return out


def _kind(v) -> str:
    if isinstance(v, bool):
        return f"a boolean ({str(v).lower()})"
    if v is None:
        return "nothing (null)"
    if isinstance(v, dict):
        return "a mapping"
    if isinstance(v, list):
        return "a list"
    if isinstance(v, str):
        return f"the string {v!r}"
    if isinstance(v, (int, float)):
        return f"the number {v!r}"
    return type(v).__name__


_TYPE_WORDS = {
    "object": "a mapping", "array": "a list", "string": "a string", "number": "a number",
    "integer": "an integer", "boolean": "true or false", "null": "null",
}


def _expected(types) -> str:
    if isinstance(types, str):
        types = [types]
    if set(types) == {"number", "string"}:
        return "a number (or an expression string)"
    return " or ".join(_TYPE_WORDS.get(t, t) for t in types)


def _messages(err) -> list[tuple[list, str]]:
    """(path parts, message) for one validator error, from its keyword,
    the keyword's value in the schema and the instance."""
    path = list(err.absolute_path)
    kw = err.validator
    inst = err.instance
    last = path[-1] if path else None
    if kw == "type":
        where = " at the top level" if not path else ""
        return [(path, f"expected {_expected(err.validator_value)}{where}, got {_kind(inst)}")]
    if kw == "required" and isinstance(inst, dict):
        return [(path + [k], f"missing {k!r}") for k in err.validator_value if k not in inst]
    if kw == "additionalProperties" and isinstance(inst, dict):
        allowed = sorted(err.schema.get("properties", {}))
        extra = [k for k in inst if k not in err.schema.get("properties", {})]
        return [(path + [k], f"unknown key {k!r} (allowed: {', '.join(allowed)})")
                for k in extra]
    if kw == "enum":
        what = last if isinstance(last, str) else "value"
        opts = ", ".join(map(str, err.validator_value))
        return [(path, f"unknown {what} {inst!r} (one of {opts})")]
    if kw == "minItems":
        what = last if isinstance(last, str) else "items"
        return [(path, f"expected a non-empty list of {what}")]
    if kw == "minLength":
        return [(path, "must not be empty")]
    if kw == "pattern":
        return [(path, f"{inst!r} is not a valid name (letters, digits and _, "
                       "not starting with a digit)")]
    if kw == "const":
        return [(path, f"expected {err.validator_value!r}, got {_kind(inst)}")]
    # a keyword this module does not word itself: the validator's text
    return [(path, err.message)]


def validate(data: Any) -> list[tuple[str, str]]:
    """Structural errors of a parsed model file, as ``(path, message)``
    pairs in document order (empty when the structure is valid).

    A valid file is recognised by :func:`conforms` without importing
    jsonschema; only a file with errors runs the full validator, for its
    error locations."""
    if conforms(data):
        return []
    errors = []
    seen = set()
    for err in sorted(_validator().iter_errors(data), key=lambda e: list(map(str, e.path))):
        if err.validator == "pattern" and "propertyNames" in err.schema_path:
            # a mapping key that fails its pattern: the path names the key
            item = (format_path(list(err.absolute_path) + [err.instance]),
                    f"{err.instance!r} is not a valid symbol name (letters, digits and _, "
                    "not starting with a digit)")
            if item not in seen:
                seen.add(item)
                errors.append(item)
            continue
        if err.validator == "propertyNames":
            # the name that failed is the instance of the nested error
            for sub in err.context or [err]:
                p = format_path(list(err.absolute_path) + [sub.instance])
                item = (p, f"{sub.instance!r} is not a valid symbol name (letters, digits "
                           "and _, not starting with a digit)")
                if item not in seen:
                    seen.add(item)
                    errors.append(item)
            continue
        for parts, msg in _messages(err):
            item = (format_path(parts), msg)
            if item not in seen:
                seen.add(item)
                errors.append(item)
    return errors


# ---------------------------------------------------------------------------
# command line
# ---------------------------------------------------------------------------

def _cmd_schema(args) -> int:
    text = _schema_text()
    if getattr(args, "output", None):
        try:
            with open(args.output, "w", encoding="utf-8") as f:
                f.write(text)
        except OSError as e:
            print(f"error: cannot write {args.output}: {e.strerror}", file=sys.stderr)
            return 2
        return 0
    sys.stdout.write(text)
    return 0


def register_cli(sub) -> None:
    """Add ``qmodels schema`` (print the model-file JSON Schema) to an
    argparse subparsers object."""
    p = sub.add_parser("schema", help="print the JSON Schema of model files",
                       description="Print the JSON Schema (draft 2020-12) that model files "
                                   "follow; editors and CI can validate files with it.")
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of stdout")
    p.set_defaults(func=_cmd_schema)
