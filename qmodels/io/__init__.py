"""Model files: YAML/JSON in and out (:mod:`.modelfile`).  This layer sits
just above the model and knows nothing of solvers; the ``qmodels`` command
is :mod:`qmodels.cli`, the top of the package."""
