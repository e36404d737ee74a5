"""Code that makes a Python process unable to import torch and the other extras, as the core install is."""

#: Put first in ``python -c`` code: those modules then fail to import as if not installed.
NO_TORCH = (
    "import sys\n"
    "class Block:\n"
    "    def find_spec(self, name, path=None, target=None):\n"
    "        if name.partition('.')[0] in {'torch', 'transformers', 'datasets', 'evaluate', 'onnx', 'sklearn'}:\n"
    "            raise ModuleNotFoundError(name, name=name)\n"
    "sys.meta_path.insert(0, Block())\n"
)
