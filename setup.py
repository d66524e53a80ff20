"""Build hook: a wheel carries the simulator's machine code.

Everything else about the package is in ``setup.cfg``.  When a wheel is
built (not for an editable install), ``build_py`` also runs ``qmodels
warm-up --ship`` on the built package, which compiles the simulator's event
loop for the generic CPU of this architecture into
``qmodels/_kernels/`` (see ``qmodels/_shipped.py``), so that the first
simulation after ``pip install`` of the wheel does not wait for numba.

That needs the package's dependencies importable by the building Python:
``make wheel`` builds without isolation from the project's environment and
sets ``QMODELS_AOT=require`` (a failure stops the build).  Elsewhere (an
isolated build, an sdist install) the default ``QMODELS_AOT=auto`` builds
the wheel without machine code if the compile cannot run, saying so; the
simulator then compiles on first use, as numba does.  ``QMODELS_AOT=0``
skips it.

``QMODELS_SHIP_FROM=DIR`` ships code compiled before instead: the kernel
files (``*.nbk`` and ``*.json``) of DIR, a folder ``qmodels warm-up --ship
DIR`` wrote, are copied into the built package and nothing is compiled
(``QMODELS_AOT`` is not consulted).  The build stops, naming the variable,
if DIR is missing, holds no kernels, or holds a kernel the built package
could not use (built from other sources, another numba or interpreter:
``qmodels warm-up --check`` says why), which needs the dependencies
importable as the compile does.  ``tests/test_shipped.py`` builds its wheel
this way from the code its fixture compiled, rather than compiling all of
it a second time.
"""

import os
import shutil
import subprocess
import sys

from setuptools import setup
from setuptools.command.build_py import build_py

#: checks, in the built package, that every kernel in a folder is usable
_SURVEY = ("import sys\n"
           "from qmodels._shipped import survey\n"
           "bad = [f'{k}: {why}' for k, _, why in survey(sys.argv[1]) if why]\n"
           "print(bad[0] if bad else '')\n"
           "sys.exit(1 if bad else 0)\n")


class build_py_with_kernels(build_py):
    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return
        dest = os.path.join(self.build_lib, "qmodels", "_kernels")
        ship_from = os.environ.get("QMODELS_SHIP_FROM", "")
        if ship_from:
            self._ship_from(ship_from, dest)
            return
        mode = os.environ.get("QMODELS_AOT", "auto").strip().lower()
        if mode == "0":
            return
        # run from inside build_lib: ``-m`` puts the working folder first on the path
        out = subprocess.run([sys.executable, "-m", "qmodels", "warm-up", "--ship",
                              os.path.abspath(dest)], env=self._env(), capture_output=True,
                             text=True, cwd=os.path.abspath(self.build_lib))
        print(out.stdout, end="")
        if out.returncode == 0:
            return
        if mode == "require":
            print(out.stderr, end="", file=sys.stderr)
            raise SystemExit(f"qmodels warm-up --ship failed (exit {out.returncode}) with "
                             "QMODELS_AOT=require")
        last = (out.stderr.strip().splitlines() or ["?"])[-1]
        print(f"note: the wheel ships no machine code for the simulator ({last}); it will "
              "compile on first use", file=sys.stderr)

    def _env(self, **extra):
        """The environment that imports the built package first."""
        env = dict(os.environ, **extra)
        env["PYTHONPATH"] = os.pathsep.join(
            [os.path.abspath(self.build_lib)] + [p for p in env.get("PYTHONPATH", "").split(
                os.pathsep) if p])
        return env

    def _ship_from(self, src, dest):
        """Copy the kernel files of ``src`` into ``dest``; stop the build
        unless the built package can use every kernel there."""
        names = sorted(os.listdir(src)) if os.path.isdir(src) else []
        names = [n for n in names if n.endswith((".nbk", ".json"))]
        if not any(n.endswith(".nbk") for n in names):
            what = "no kernels (*.nbk) in it" if os.path.isdir(src) else "no such folder"
            raise SystemExit(f"QMODELS_SHIP_FROM={src}: {what} (write them with `qmodels "
                             "warm-up --ship DIR`)")
        os.makedirs(dest, exist_ok=True)
        for name in names:
            shutil.copyfile(os.path.join(src, name), os.path.join(dest, name))
        # QMODELS_KERNELS empty: importing the kernels loads no shipped code
        out = subprocess.run([sys.executable, "-c", _SURVEY, os.path.abspath(dest)],
                             env=self._env(QMODELS_KERNELS=""), capture_output=True, text=True,
                             cwd=os.path.abspath(self.build_lib))
        if out.returncode != 0:
            why = out.stdout.strip() or (out.stderr.strip().splitlines() or ["?"])[-1]
            raise SystemExit(f"QMODELS_SHIP_FROM={src}: the built package cannot use its "
                             f"machine code ({why})")
        print(f"machine code from QMODELS_SHIP_FROM={src}: {len(names)} files in {dest}")


setup(cmdclass={"build_py": build_py_with_kernels})
