"""Input and output: model files (:mod:`.modelfile`) and the ``qmodels``
command (:mod:`.cli`)."""
