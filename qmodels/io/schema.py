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
import sys
from importlib import resources
from typing import Any

__all__ = ["schema", "validate", "format_path", "register_cli", "SCHEMA_FILE"]

SCHEMA_FILE = "model.schema.json"


@functools.lru_cache(maxsize=1)
def _schema_text() -> str:
    return resources.files("qmodels.io").joinpath(SCHEMA_FILE).read_text(encoding="utf-8")


def schema() -> dict:
    """The model-file JSON Schema as a dict (a fresh copy each call)."""
    return json.loads(_schema_text())


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
    pairs in document order (empty when the structure is valid)."""
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
