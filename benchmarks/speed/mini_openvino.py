"""mini's graph on OpenVINO against ONNX Runtime (issue 37 asked for both): the same batches, one run.

OpenVINO is not a dependency of the package; install it for this benchmark only (``pip install openvino``).
The batches are those mini's ONNX Runtime scorer makes of ``--n`` CC3M captions (the shipped ones,
repeated in order; repeats scored once), recorded once and then run by each runtime in turn, ``--repeats``
times, two at a time (one per core, one runtime thread each, as the scorer runs them). Timed: the
network alone, which is what the runtimes differ in; reading, tokenizing and batching are the same code.
The largest logit difference between the runtimes is recorded too.

    pip install openvino && python benchmarks/speed/mini_openvino.py --repeats 3
"""

from __future__ import annotations

import importlib.metadata
import statistics
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
from arguments import timing_parser
from result_file import write_result

from modeling_icc.models.mini.files import shipped_heads_path
from modeling_icc.models.mini.onnx_graph import mini_graph
from modeling_icc.models.mini.onnx_signature import ATTENTION_MASK, INPUT_IDS, LOGITS
from modeling_icc.scoring.mini_onnx import MiniOnnxScorer, batch_threads, cpu_session
from modeling_icc.utils.shipped_data import cc3m_captions

RESULTS = Path(__file__).resolve().parent / "results"
Batch = dict[str, np.ndarray]


def recorded_batches(n: int) -> list[Batch]:
    """The inputs mini's ONNX Runtime scorer gives its session for ``n`` CC3M captions."""
    pool = [caption.replace("\n", " ") for caption in cc3m_captions()]
    scorer = MiniOnnxScorer(progress=False)
    batches: list[Batch] = []
    session = scorer._session

    class Recording:
        def run(self, outputs: list[str], inputs: Batch) -> list[np.ndarray]:
            batches.append({name: array.copy() for name, array in inputs.items()})
            return session.run(outputs, inputs)

    scorer._session = Recording()
    scorer.score([pool[index % len(pool)] for index in range(n)])
    return batches


def openvino_runner(graph: Path, threads: int) -> Callable[[Batch], np.ndarray]:
    """Runs a batch on OpenVINO's CPU plugin in fp32, one stream per calling thread."""
    import openvino

    compiled = openvino.Core().compile_model(
        str(graph),
        "CPU",
        {"INFERENCE_PRECISION_HINT": "f32", "NUM_STREAMS": threads, "INFERENCE_NUM_THREADS": threads},
    )
    local = threading.local()

    def run(batch: Batch) -> np.ndarray:
        if not hasattr(local, "request"):
            local.request = compiled.create_infer_request()
        return local.request.infer(batch)[0].copy()

    return run


def main() -> None:
    args = timing_parser(__doc__, RESULTS / "mini_openvino.json", n=20_000, repeats=3).parse_args()
    graph, _ = mini_graph(shipped_heads_path())
    batches = recorded_batches(args.n)
    threads = batch_threads()
    session = cpu_session(str(graph))
    runners = {
        "onnxruntime": lambda batch: session.run([LOGITS], batch)[0],
        "openvino": openvino_runner(graph, threads),
    }
    seconds: dict[str, list[float]] = {name: [] for name in runners}
    logits: dict[str, np.ndarray] = {}
    with ThreadPoolExecutor(threads) as pool:
        for run in runners.values():  # untimed warm-up
            list(pool.map(run, batches[:4]))
        for _ in range(args.repeats):  # alternating, so both see the same load
            for name, run in runners.items():
                start = time.perf_counter()
                logits[name] = np.concatenate(list(pool.map(run, batches)))
                seconds[name].append(time.perf_counter() - start)
    results = {
        name: {"network_s": round(statistics.median(runs), 3), "runs_s": [round(value, 3) for value in runs]}
        for name, runs in seconds.items()
    }
    results["openvino_speedup"] = round(results["onnxruntime"]["network_s"] / results["openvino"]["network_s"], 3)
    difference = np.abs(logits["openvino"].astype(np.float64) - logits["onnxruntime"])
    results["max_abs_logit_difference"] = float(difference.max())
    print({key: results[key] for key in ("openvino_speedup", "max_abs_logit_difference")})
    write_result(
        "mini_openvino",
        args.out,
        results,
        n=args.n,
        repeats=args.repeats,
        batches=len(batches),
        tokens=int(sum(batch[ATTENTION_MASK].sum() for batch in batches)),
        padded_tokens=int(sum(batch[INPUT_IDS].size for batch in batches)),
        batches_at_once=threads,
        runtimes={name: importlib.metadata.version(name) for name in ("onnxruntime", "openvino")},
    )


if __name__ == "__main__":
    main()
