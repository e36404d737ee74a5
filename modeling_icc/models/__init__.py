"""Model definitions: the ICC student (icc/), the SBA teacher model (sba/) and the embedded
lite model (lite/). They import nothing of the package but utils/."""
