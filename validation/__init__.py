"""Cross-check harness: the same networks through exact MVA, the CTMC,
analytic approximations and the simulator, side by side.

``python -m validation --out DIR [--fast] [--seed S]``; see README.md.
"""

from .catalog import CATALOG, FAST, Case, by_name
from .report import allowance, run, run_case, verdict, write_report

__all__ = ["CATALOG", "FAST", "Case", "by_name", "allowance", "run", "run_case", "verdict",
           "write_report"]
