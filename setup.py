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
"""

import os
import subprocess
import sys

from setuptools import setup
from setuptools.command.build_py import build_py


class build_py_with_kernels(build_py):
    def run(self):
        super().run()
        mode = os.environ.get("QMODELS_AOT", "auto").strip().lower()
        if getattr(self, "editable_mode", False) or mode == "0":
            return
        dest = os.path.join(self.build_lib, "qmodels", "_kernels")
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            [os.path.abspath(self.build_lib)] + [p for p in env.get("PYTHONPATH", "").split(
                os.pathsep) if p])
        # run from inside build_lib: ``-m`` puts the working folder first on the path
        out = subprocess.run([sys.executable, "-m", "qmodels", "warm-up", "--ship",
                              os.path.abspath(dest)], env=env, capture_output=True, text=True,
                             cwd=os.path.abspath(self.build_lib))
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


setup(cmdclass={"build_py": build_py_with_kernels})
