"""How to cite ICC: the paper every card, the evaluate module and the Space point to."""

PAPER_URL = "https://aclanthology.org/2024.findings-acl.592/"
CITATION = """@inproceedings{yanuka-etal-2024-icc,
    title = "{ICC}: Quantifying Image Caption Concreteness for Multimodal Dataset Curation",
    author = "Yanuka, Moran and Alper, Morris and Averbuch-Elor, Hadar and Giryes, Raja",
    booktitle = "Findings of the Association for Computational Linguistics: ACL 2024",
    year = "2024",
    url = "https://aclanthology.org/2024.findings-acl.592/",
}"""
