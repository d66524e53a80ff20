"""Analytic solvers: laws and bounds, closed forms, MVA, convolution,
decomposition and the exact CTMC.  Each module states its assumptions and
refuses, with a typed error, a model it cannot honour.

===================  ========================================================
:mod:`.laws`         operational laws, N*, the bottleneck law
:mod:`.bounds`       asymptotic, balanced job, geometric and proportional
                     bounds of one class; the ``Bounds`` result
:mod:`.bounds_multiclass`  bounds with several classes or token pools
:mod:`.queues`       single-station closed forms (M/M/1 ... G/G/c): the
                     ``QueueMetrics`` result, Markovian and general queues
:mod:`.mva`          exact single-class MVA; ``mva`` dispatches every
                     product-form network to its exact solver
:mod:`.open`         open (Jackson, BCMP) networks
:mod:`.multiclass`   exact multi-class MVA over the population lattice, and
                     mixed networks
:mod:`.amva`         approximate MVA: Schweitzer-Bard and Linearizer
:mod:`.qna`          Whitt's Queueing Network Analyzer: open networks with
                     general service and arrival shapes (approximate)
:mod:`.rqna`         Whitt & You's robust queueing network analyzer: one
                     open class, single-server FCFS queues, flows by their
                     indices of dispersion (approximate)
:mod:`.amva_residual`  Schweitzer MVA with the residual-service correction
                     for general FCFS service, closed (approximate)
:mod:`.convolution`  normalising constants (Buzen) in log space
:mod:`.batch`        exact and approximate MVA over many networks at once
:mod:`.decomposition`  flow-equivalent servers for held resources
:mod:`.forkjoin_pools`  a closed fork-join whose tasks hold token pools
                     along its branch (approximate)
:mod:`.ctmc`         the exact Markov chain of small networks (its network
                     description in ``_ctmc_spec``, its state generator in
                     ``_ctmc_chain``)
===================  ========================================================

Nothing here imports the simulator (:mod:`qmodels.sim`), and the simulator
imports nothing from here: the validation harness holds the two together.
"""
