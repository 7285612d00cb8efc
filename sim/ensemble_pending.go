package sim

// ensembleUnavailable is why an ensemble model (ModelSpec.EnsembleScheduling)
// cannot load: the simulator maps its ensemble_scheduling but does not run
// its steps. The model is listed with its versions UNAVAILABLE for this
// reason, a request to it is answered as for a model with no available
// version, and loading it answers Triton's load failure with it; the
// server's readiness does not wait for it.
const ensembleUnavailable = "Unsupported: the simulator does not run ensemble models yet"
