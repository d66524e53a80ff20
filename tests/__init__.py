"""The qmodels test suite (a package, so ``from tests.x import ...`` finds these
files and not a ``tests`` package some other distribution installs into
site-packages, as Ciw does)."""
