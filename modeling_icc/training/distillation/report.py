"""A short human-readable account of a pipeline run (what ``run_pipeline.py`` prints)."""

from __future__ import annotations


def format_summary(summary: dict) -> str:
    steps = summary["steps"]
    lines = ["step            status                    seconds"]
    for name, record in steps.items():
        lines.append(f"{name:15s} {record['status']:25s} {record['seconds']:8.1f}")
    lines.append(f"wall time of this invocation: {summary['wall_seconds_this_invocation']:.1f} s")
    if "teachers" in steps:
        m = steps["teachers"]["metrics"]
        lines.append(
            f"teacher-scored captions: {m['n_scored']}; annotated captions for the combiner: {m['n_annotated']}"
        )
    if "combine" in steps:
        m = steps["combine"]["metrics"]
        lines.append(
            f"combiner: ICC = sigmoid({m['vba_weight']:.3f}*VBA + {m['sba_weight']:.3f}*SBA + {m['intercept']:.3f}); "
            f"{m['cv_folds']}-fold CV ROC-AUC {m['cv_roc_auc']:.3f}, accuracy {m['cv_accuracy']:.3f}"
        )
    if "distill" in steps:
        m = steps["distill"]["metrics"]
        m = m.get("student", m)  # two-stage runs report each stage
        lines.append(
            f"student held-out vs target: Pearson {m.get('pearson', float('nan')):.3f}, "
            f"Spearman {m.get('spearman', float('nan')):.3f}"
        )
    if "evaluate" in steps:
        m = steps["evaluate"]["metrics"]
        for who in ("student", "published_moranyanuka_icc"):
            c = m[who]
            lines.append(
                f"dev split ({m['n']} captions) vs human labels, {who}: Pearson {c['pearson']:.3f} / "
                f"Spearman {c['spearman']:.3f} / Kendall {c['kendall']:.3f}"
            )
    outputs = summary["outputs"]
    lines.append(
        f"outputs: {outputs['teacher_score_dataset']}, {outputs['standardizer']}, {outputs['combiner']}, "
        f"{outputs['student']}, plots: {', '.join(outputs['plots'])}"
    )
    return "\n".join(lines)
