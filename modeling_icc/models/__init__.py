"""Model definitions: the ICC student (icc/), the SBA teacher model (sba/), and the two zero-download
models, mini (mini/: the pip MiniLM encoder + heads) and lite (lite/: pure Python). They import nothing
of the package but utils/."""
