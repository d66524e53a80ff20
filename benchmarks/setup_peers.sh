#!/usr/bin/env bash
# Install what the benchmark peers need; never fail the caller: a peer that
# cannot be installed is reported, and `python -m benchmarks` goes on without it.
#
#   bash benchmarks/setup_peers.sh [PYTHON]     (default: .venv/bin/python)
#
# - line-solver (PyPI), into the given Python's environment.  It is installed
#   with --no-deps: its metadata pins pandas<3, and a plain `pip install`
#   would downgrade the project's pandas; the solver functions the benchmark
#   calls (line_solver.api.pfqn) need only numpy and scipy, which the project
#   already has; its other dependencies are installed separately, pandas aside.
# - GNU Octave and its queueing package (Debian: octave, octave-queueing),
#   with apt-get when running as root (or through sudo when it is there).
# - Ciw and SimPy (PyPI), the simulator benchmark's peers.
# - a C compiler (Debian: gcc) for the plain C reference loop.
#
# Set QM_BENCH_NO_APT=1 to skip apt-get.
set -u

PY=${1:-.venv/bin/python}
if [ ! -x "$PY" ]; then PY=$(command -v python3); fi
status=0
say() { printf 'setup_peers: %s\n' "$*"; }

# ---- line-solver -----------------------------------------------------------
if "$PY" -c "import line_solver.api.pfqn.mva" >/dev/null 2>&1; then
    say "line-solver already importable"
else
    # its other requirements, none of which moves pandas (websockets and mcp
    # serve its MCP server only, not the solver functions: left out)
    "$PY" -m pip install --quiet "matplotlib>=3.10.6" "networkx>=3.6" "scipy>=1.16.2" \
        >/dev/null 2>&1 || say "could not install line-solver's plotting/graph dependencies"
    if "$PY" -m pip install --quiet --no-deps line-solver \
        && "$PY" -c "import line_solver.api.pfqn.mva" >/dev/null 2>&1; then
        say "line-solver installed (--no-deps)"
    else
        say "line-solver UNAVAILABLE (pip install or import failed); the benchmark goes on without it"
        status=1
    fi
fi

# ---- the simulators' peers: Ciw and SimPy (PyPI) ------------------------------
if "$PY" -c "import ciw, simpy" >/dev/null 2>&1; then
    say "ciw and simpy already importable"
elif "$PY" -m pip install --quiet ciw simpy >/dev/null 2>&1 \
        && "$PY" -c "import ciw, simpy" >/dev/null 2>&1; then
    say "ciw and simpy installed"
else
    say "ciw/simpy UNAVAILABLE (pip install failed); the simulator cases go on without them"
    status=1
fi

# ---- apt packages: Octave + queueing, a C compiler --------------------------
need=()
command -v octave-cli >/dev/null 2>&1 || need+=(octave)
if ! { command -v octave-cli >/dev/null 2>&1 && \
       octave-cli -q --eval "pkg load queueing" >/dev/null 2>&1; }; then
    need+=(octave-queueing)
fi
command -v cc >/dev/null 2>&1 || need+=(gcc libc6-dev)

if [ ${#need[@]} -eq 0 ]; then
    say "Octave + queueing and a C compiler already present"
elif [ "${QM_BENCH_NO_APT:-0}" = "1" ]; then
    say "QM_BENCH_NO_APT=1: not installing ${need[*]}; those peers will be skipped"
else
    SUDO=""
    if [ "$(id -u)" != "0" ]; then
        if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then SUDO="sudo -n"; fi
    fi
    if [ "$(id -u)" = "0" ] || [ -n "$SUDO" ]; then
        say "apt-get install ${need[*]} (a few minutes the first time)"
        if $SUDO apt-get update -qq >/dev/null 2>&1 && \
           DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
               "${need[@]}" >/dev/null 2>&1; then
            say "installed ${need[*]}"
        else
            say "apt-get install ${need[*]} FAILED; those peers will be skipped"
            status=1
        fi
    else
        say "not root and no sudo: cannot install ${need[*]}; those peers will be skipped"
        status=1
    fi
fi

command -v octave-cli >/dev/null 2>&1 && octave-cli -q --eval "pkg load queueing" >/dev/null 2>&1 \
    && say "Octave queueing ready" || say "Octave queueing UNAVAILABLE"
command -v cc >/dev/null 2>&1 && say "C compiler ready: $(command -v cc)" || say "C compiler UNAVAILABLE"
# the status is informative only: the benchmark runs with whatever is there
[ $status -eq 0 ] || say "some peers are missing (see above); continuing"
exit 0
