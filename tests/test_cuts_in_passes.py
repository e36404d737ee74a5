"""Cuts fitted in passes over values read again (from disk): exactly the rows of the in-memory rule."""

import numpy as np
import pytest

from modeling_icc.curation.cuts_in_passes import fit_cuts_in_passes, sortable_keys
from modeling_icc.curation.engines.spill import SpilledArrays
from modeling_icc.curation.filter_plan import ColumnRule, FilterPlan
from modeling_icc.curation.selection import Cut, KeepRule, fit_cuts, keep_mask

RULES = [
    KeepRule(top_k=0),
    KeepRule(top_k=1),
    KeepRule(top_k=37),
    KeepRule(top_k=10**9),
    KeepRule(top_fraction=1e-9),
    KeepRule(top_fraction=0.1),
    KeepRule(top_fraction=0.3),
    KeepRule(top_fraction=0.5),
    KeepRule(top_fraction=1.0),
]
LEVELS = [-1.5, -0.0, 0.0, 0.25, 0.5, 0.75, 1.0, 1.2, np.inf, -np.inf, np.nan]


def split(values: np.ndarray, rng: np.random.Generator) -> list[np.ndarray]:
    """Pieces of random sizes, some empty, so that ties straddle piece boundaries."""
    edges = np.sort(rng.integers(0, len(values) + 1, size=rng.integers(0, 12)))
    return np.split(values, edges)


def assert_same_rows(pieces: list[np.ndarray], rule: KeepRule) -> None:
    cuts = fit_cuts_in_passes(pieces, rule)
    assert cuts == fit_cuts(pieces, rule)
    kept = [cut.mask(piece) for cut, piece in zip(cuts, pieces, strict=True)]
    whole = np.concatenate(pieces or [np.zeros(0)]).astype(np.float64)
    np.testing.assert_array_equal(np.concatenate(kept or [np.zeros(0, bool)]), keep_mask(whole, rule))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("seed", range(8))
def test_random_values_with_many_ties_and_nans(dtype, seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 500))
    values = np.where(rng.random(n) < 0.6, rng.choice(LEVELS, size=n), rng.normal(size=n)).astype(dtype)
    for rule in RULES:
        assert_same_rows(split(values, rng), rule)


@pytest.mark.parametrize("values", [np.full(50, 0.5), np.full(50, np.nan), np.zeros(0), np.array([-0.0, 0.0] * 9)])
def test_all_equal_all_nan_and_empty_inputs(values):
    rng = np.random.default_rng(0)
    for rule in RULES:
        for dtype in (np.float32, np.float64):
            assert_same_rows(split(values.astype(dtype), rng), rule)


def test_no_pieces_and_k_zero_give_no_rows():
    assert fit_cuts_in_passes([], KeepRule(top_k=3)) == []
    assert fit_cuts_in_passes([np.ones(4), np.ones(2)], KeepRule(top_k=0)) == [Cut(np.inf, ties=0)] * 2


@pytest.mark.parametrize(("n", "fraction"), [(5, 0.1), (5, 0.3), (3, 0.5), (7, 0.5), (1, 0.49), (1, 0.5), (10, 0.05)])
def test_top_fraction_rounds_k_as_the_in_memory_rule(n, fraction):
    values = np.arange(n, dtype=np.float32)[::-1].copy()
    cuts = fit_cuts_in_passes([values[:2], values[2:]], KeepRule(top_fraction=fraction))
    kept = np.concatenate([cut.mask(piece) for cut, piece in zip(cuts, (values[:2], values[2:]), strict=True)])
    assert (
        kept.sum()
        == KeepRule(top_fraction=fraction).top_count(n)
        == keep_mask(values, KeepRule(top_fraction=fraction)).sum()
    )


def test_float64_values_that_differ_only_in_their_lowest_bits():
    """A float32 key would merge them; every 16-bit pass of the float64 key is needed."""
    base = np.float64(0.7)
    steps = np.nextafter(base, 2.0) - base
    values = base + steps * np.random.default_rng(1).integers(0, 5, size=300)
    values[::7] = -values[::7]
    for rule in RULES:
        assert_same_rows(split(values, np.random.default_rng(2)), rule)
    assert len(np.unique(values)) == 10


def test_pieces_of_different_float_types_rank_together():
    pieces = [
        np.array([0.5, 0.25], dtype=np.float16),
        np.array([0.5, 0.1 + 1e-12, np.nan], dtype=np.float64),
        np.array([0.1, 0.5], dtype=np.float32),
        np.array([1, 0], dtype=np.int64),
    ]
    for rule in RULES:
        assert_same_rows(pieces, rule)


def test_sortable_keys_order_as_the_values():
    rng = np.random.default_rng(3)
    for dtype in (np.float32, np.float64):
        values = np.concatenate([rng.normal(scale=1e3, size=1000), LEVELS, [5e-324, -5e-324]]).astype(dtype)
        values = np.sort(values[~np.isnan(values)])
        keys = sortable_keys(np.concatenate([values, [np.nan]]).astype(dtype))
        assert keys.dtype == np.dtype(f"u{np.dtype(dtype).itemsize}") and len(keys) == len(values)
        assert np.all(np.diff(keys.astype(object)) >= 0)
        assert np.array_equal(np.diff(keys.astype(object)) == 0, np.diff(values) == 0)


def test_refuses_an_iterator_and_a_threshold():
    with pytest.raises(TypeError, match="re-iterable"):
        fit_cuts_in_passes(iter([np.ones(3)]), KeepRule(top_k=1))
    with pytest.raises(ValueError, match="top_k / top_fraction"):
        fit_cuts_in_passes([np.ones(3)], KeepRule(threshold=0.5))


def test_spilled_pieces_give_the_cuts_of_the_plan_in_memory(tmp_path):
    """A plan with an ICC ranking rule AND another column's ranking rule, fitted from files."""
    rng = np.random.default_rng(4)
    plan = FilterPlan(KeepRule(top_fraction=0.3), other=ColumnRule("clip", KeepRule(top_k=40)))
    pieces = [
        {"icc": rng.choice([0.1, 0.5, 0.9, np.nan], size=n).astype(np.float32), "other": rng.integers(0, 4, n) * 1.0}
        for n in (30, 0, 45, 25)
    ]
    spilled = {name: SpilledArrays(tmp_path / name) for name in ("icc", "other")}
    for piece in pieces:
        for name, values in piece.items():
            spilled[name].append(values)
    assert plan.fit_in_passes(spilled) == plan.fit(pieces)
    with pytest.raises(ValueError, match="top_k / top_fraction"):
        FilterPlan(KeepRule(threshold=0.5)).fit_in_passes({})
    with pytest.raises(ValueError, match="different numbers of pieces"):
        plan.fit_in_passes({"icc": [np.ones(2), np.ones(3)], "other": [np.ones(5)]})


def test_spilled_arrays_read_back_in_order_as_often_as_needed(tmp_path):
    spilled = SpilledArrays(tmp_path / "values")
    arrays = [np.arange(5, dtype=np.float32), np.zeros(0, dtype=np.float64), np.array([np.nan, 2.5]), np.arange(3)]
    for values in arrays:
        spilled.append(values)
    for _ in range(2):
        read = list(spilled)
        assert [a.dtype for a in read] == [a.dtype for a in arrays] and len(spilled) == 4
        for got, want in zip(read, arrays, strict=True):
            np.testing.assert_array_equal(got, want)
    with pytest.raises(ValueError, match="1-D"):
        spilled.append(np.zeros((2, 2)))
    with (tmp_path / "values").open("r+b") as handle:
        handle.truncate(24)
    with pytest.raises(OSError, match="cut short"):
        list(spilled)
