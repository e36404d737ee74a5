"""One FilterPlan for every engine: cuts fitted per piece, ICC AND another column's rule, node-level filtering."""

import itertools

import numpy as np
import pyarrow as pa
import pytest

from modeling_icc.curation.columns import to_float_array
from modeling_icc.curation.filter_plan import RAW_SCORE_COLUMN, ColumnRule, FilterPlan
from modeling_icc.curation.selection import Cut, KeepRule, fit_cuts, keep_mask
from modeling_icc.utils.errors import UserInputError

RNG = np.random.default_rng(3)
SCORES = RNG.integers(0, 6, size=90).astype(np.float32) / 5  # many ties
SCORES[::17] = np.nan
OTHER = RNG.integers(0, 4, size=90).astype(np.float64)


def pieces(values, bounds=(0, 11, 11, 40, 77, 90)):
    return [values[a:b] for a, b in itertools.pairwise(bounds)]


@pytest.mark.parametrize(
    ("rule", "other"),
    [
        (KeepRule(top_k=20), None),
        (KeepRule(top_fraction=0.3), ColumnRule("clip", KeepRule(top_k=40))),
        (KeepRule(threshold=0.6), ColumnRule("clip", KeepRule(top_fraction=0.5))),
        (KeepRule(top_k=25), ColumnRule("clip", KeepRule(threshold=2))),
    ],
)
def test_cuts_fitted_over_pieces_keep_the_rows_of_one_pass(rule, other):
    plan = FilterPlan(rule, other=other).bind(["caption", "clip"], nested=False, use_scores=False)
    whole = {"icc_score": SCORES, RAW_SCORE_COLUMN: SCORES, "clip": OTHER}
    expected = keep_mask(SCORES, rule) & (keep_mask(OTHER, other.rule) if other else True)
    np.testing.assert_array_equal(plan.mask(whole, len(SCORES)), expected)
    parts = [dict(zip(whole, values, strict=True)) for values in zip(*(pieces(v) for v in whole.values()), strict=True)]
    cuts = plan.fit([plan.ranking_values(part) for part in parts])
    joined = np.concatenate([plan.mask(part, len(part["clip"]), cut) for part, cut in zip(parts, cuts, strict=True)])
    np.testing.assert_array_equal(joined, expected)


def test_ties_by_smallest_id_or_all_when_no_order_is_known():
    values = np.array([0.9, 0.5, 0.5, 0.5, 0.1, 0.5])
    ids = pa.array(["f", "c", "a", "e", "b", "d"])
    (by_id,) = fit_cuts([values], KeepRule(top_k=3), ids=[ids])
    assert by_id == Cut(0.5, last_tied_id="c")
    assert by_id.mask(values, ids).tolist() == [True, True, True, False, False, False]
    (every_tie,) = fit_cuts([values], KeepRule(top_k=3), ordered=False)
    assert every_tie.mask(values).sum() == 5
    with pytest.raises(UserInputError, match="unique"):
        fit_cuts([values], KeepRule(top_k=3), ids=[pa.array(["a"] * 6)])


def test_node_level_keeps_aligned_items_within_rows_and_recomputes_aggregates():
    plan = FilterPlan(KeepRule(top_k=1), "nodes", level="node", node_columns=["kinds"])
    plan = plan.bind(["nodes", "kinds"], nested=True)
    columns = {
        "nodes": [["a", "b", "c"], None, []],
        "kinds": [["x", "y", "z"], None, []],
        "icc_score": [[0.2, 0.9, 0.4], None, []],
        "icc_score_max": np.array([0.9, np.nan, np.nan], dtype=np.float32),
    }
    kept = plan.keep_nodes(columns)
    assert kept["nodes"] == [["b"], None, []] and kept["kinds"] == [["y"], None, []]
    assert kept["icc_score_max"][0] == pytest.approx(0.9)


@pytest.mark.parametrize(
    ("plan", "names", "nested", "message"),
    [
        (FilterPlan(KeepRule(threshold=0.5), "nodes"), ["nodes"], True, "aggregate="),
        (FilterPlan(KeepRule(threshold=0.5), level="node"), ["caption"], False, "level='node' needs"),
        (FilterPlan(KeepRule(threshold=0.5), other=ColumnRule("clip", KeepRule(top_k=1))), ["caption"], False, "clip"),
    ],
)
def test_bind_refuses_plans_the_input_cannot_serve(plan, names, nested, message):
    with pytest.raises(UserInputError, match=message):
        plan.bind(names, nested)


def test_rule_columns_read_numbers_labels_and_blanks():
    np.testing.assert_array_equal(to_float_array(["1", "0", " 0.25 "]), [1.0, 0.0, 0.25])
    np.testing.assert_array_equal(to_float_array(["True", "false", "yes", "", None]), [1, 0, 1, np.nan, np.nan])
    np.testing.assert_array_equal(to_float_array(pa.array([True, None])), [1.0, np.nan])
    with pytest.raises(UserInputError, match="column 'is_related' holds 'maybe'"):
        to_float_array(["1", "maybe"], "is_related")
