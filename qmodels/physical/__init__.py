"""The physical layer: path elements built from data-sheet parameters
(:mod:`.elements`: disks, DMA engines, buses, links, CPUs, buffers, ports)
and energy, E = P x T per device and per transaction (:mod:`.energy`)."""
