"""The engine: autodiff_core's Functions, trainers, data, gradcheck, graph, devices, run files, script export."""
