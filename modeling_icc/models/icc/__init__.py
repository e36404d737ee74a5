"""The ICC student: ICCConfig, ICCForConcreteness and its fast CPU/GPU encoder."""
