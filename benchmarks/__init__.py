"""qmodels benchmarks against the peers: ``python -m benchmarks`` (``make bench``).

Not part of the test suite (pytest collects ``tests/`` only).  See
``benchmarks/README.md`` and the docstring of ``benchmarks/__main__.py``.
"""
