"""The physical layer: path elements built from data-sheet parameters
(:mod:`.storage`: disks, flash, DMA engines; :mod:`.links`: buses, memory
channels, links and transport ceilings; :mod:`.compute`: CPUs; :mod:`.held`:
buffers and switch ports; all gathered by :mod:`.elements`) and energy,
E = P x T per device and per transaction (:mod:`.energy`)."""
