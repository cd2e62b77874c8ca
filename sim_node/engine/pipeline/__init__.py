"""The step's stages, one module each, every stage a `noexcept nogil` function of the
SceneModel and the SceneData (step.pyx runs them in order)."""
