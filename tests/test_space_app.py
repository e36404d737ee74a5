"""The Spaces demo, launched for real: driven with gradio_client, and in headless Debian Chromium."""

import os

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

import csv
import json
import shutil
import subprocess

import numpy as np
import pytest

gr = pytest.importorskip("gradio", reason="the Space needs the 'space' extra (pip install -e '.[space-test]')")
from gradio_client import Client, handle_file  # noqa: E402

from modeling_icc import LiteScorer, load_scorer  # noqa: E402
from modeling_icc.apps.gradio import (  # noqa: E402
    LITE_CHOICE,
    LOCAL_CHOICE,
    MAX_ROWS,
    MINI_CHOICE,
    ORDERS,
    PUBLISHED_CHOICE,
    ScoredRows,
    build_demo,
    filter_summary,
    results_frame,
)
from modeling_icc.curation.io.tables import CaptionTable  # noqa: E402

# gradio's queue calls pandas options that pandas 3 deprecates; not ours to fix.
pytestmark = pytest.mark.filterwarnings("ignore::Warning:gradio.queueing")

CAPTIONS = ["a man with a white shirt", "a great method of quantifying concreteness", "a red car on a street"]
TINY_CHOICE = "tiny student (test)"
CHROMIUM, CHROMEDRIVER = shutil.which("chromium"), shutil.which("chromedriver")


@pytest.fixture(scope="module")
def app_url(tiny_student_dir):
    demo = build_demo(extra_models={TINY_CHOICE: str(tiny_student_dir)})
    demo.launch(prevent_thread_lock=True, server_name="127.0.0.1", ssr_mode=False, quiet=True)
    yield demo.local_url
    demo.close()


@pytest.fixture(scope="module")
def client(app_url) -> Client:
    return Client(app_url, verbose=False, download_files=False)


def score(client, text="", upload=None, choice=LITE_CHOICE, local_path="", order=ORDERS[0], threshold=0.5):
    file = handle_file(str(upload)) if upload else None
    return client.predict(text, file, choice, local_path, "caption", order, threshold, api_name="/score")


def rows_of(table: dict) -> list[dict]:
    return [dict(zip(table["headers"], row, strict=True)) for row in table["data"]]


def test_pasted_captions_give_scores_chart_highlights_and_a_download(client):
    status, table, chart, highlights, download = score(client, "\n".join(CAPTIONS) + "\n\n")
    rows = rows_of(table)
    expected = LiteScorer().score(CAPTIONS)
    assert [row["caption"] for row in rows] == CAPTIONS
    np.testing.assert_allclose([row["ICC"] for row in rows], expected, atol=5e-4)
    assert [row["kept"] for row in rows] == ["yes" if s >= 0.5 else "no" for s in expected]
    assert "Scored **3** captions from the text box with `lite`" in status
    assert len(chart["data"]) == 3 and chart["data"][0][0].startswith("#1 a man")
    assert highlights.count('class="icc-caption"') == 3 and 'class="icc-word"' in highlights
    with open(download["path"] if isinstance(download, dict) else download, newline="", encoding="utf-8") as handle:
        scored = list(csv.DictReader(handle))
    assert [row["caption"] for row in scored] == CAPTIONS
    assert [row["icc_kept"] for row in scored] == [str(row["kept"] == "yes") for row in rows]


def test_most_concrete_first_sorts_the_table(client):
    _, table, *_ = score(client, "\n".join(CAPTIONS), order=ORDERS[1])
    values = [row["ICC"] for row in rows_of(table)]
    assert values == sorted(values, reverse=True)


def test_uploaded_csv_keeps_its_columns_in_the_download(client, tmp_path):
    source = tmp_path / "pool.csv"
    with source.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["url", "caption"])
        writer.writerows([f"http://x/{i}.jpg", caption] for i, caption in enumerate(CAPTIONS))
    status, table, _, _, download = score(client, "ignored text", upload=source)
    assert "from `pool.csv`" in status and len(table["data"]) == 3
    with open(download["path"] if isinstance(download, dict) else download, newline="", encoding="utf-8") as handle:
        scored = list(csv.DictReader(handle))
    assert scored[1]["url"] == "http://x/1.jpg" and float(scored[0]["icc_score"]) > float(scored[1]["icc_score"])


def test_uploaded_jsonl_and_a_local_student_folder(client, tmp_path, tiny_student_dir):
    source = tmp_path / "captions.jsonl"
    source.write_text("".join(json.dumps({"caption": c, "id": i}) + "\n" for i, c in enumerate(CAPTIONS)))
    status, table, _, highlights, _ = score(
        client, upload=source, choice=LOCAL_CHOICE, local_path=str(tiny_student_dir)
    )
    assert f"with `{tiny_student_dir}`" in status and len(table["data"]) == 3
    assert highlights.count('class="icc-caption"') == 3  # occlusion explanations of the student


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "Nothing to score"),
        ("   \n\n ", "Nothing to score"),
        ("a caption\n" * 10_000, f"10,000 lines pasted: the demo scores at most {MAX_ROWS:,}"),
    ],
)
def test_bad_pastes_show_a_clear_message(client, text, message):
    status, table, _, highlights, download = score(client, text)
    assert status.startswith("⚠️") and message in status
    assert table["data"] == [] and highlights == "" and download is None


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("bad.jsonl", '{"caption": "ok"}\n{"caption": broken\n', "line 2 is not valid JSON"),
        ("no_caption.csv", "url,text\nhttp://x,hello\n", "no column 'caption'; available columns: url, text"),
        ("empty.csv", "caption\n", "holds no rows"),
        ("binary.parquet", "PAR1 this is not parquet", "not a readable Parquet file"),
    ],
)
def test_malformed_files_show_a_clear_message(client, tmp_path, name, content, message):
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    status, *_ = score(client, upload=path)
    assert status.startswith("⚠️") and name in status and message in status
    assert "Traceback" not in status and "/tmp" not in status  # the user knows the file by its name


def test_the_published_student_falls_back_to_lite_with_a_notice_where_it_cannot_load(client):
    status, table, _, highlights, _ = score(client, "\n".join(CAPTIONS), choice=PUBLISHED_CHOICE)
    assert "with `lite`" in status  # the summary names the model that scored
    assert "ℹ️ the ICC model 'moranyanuka/icc' cannot be loaded here" in status
    np.testing.assert_allclose([row["ICC"] for row in rows_of(table)], LiteScorer().score(CAPTIONS), atol=5e-4)
    assert highlights.count('class="icc-caption"') == 3


def test_the_mini_choice_scores_with_mini(client):
    status, table, *_ = score(client, "\n".join(CAPTIONS), choice=MINI_CHOICE)
    assert "with `mini`" in status and "cannot be loaded" not in status
    expected = load_scorer("mini", cache=True).score(CAPTIONS)
    np.testing.assert_allclose([row["ICC"] for row in rows_of(table)], expected, atol=1e-3)  # the table rounds


def test_missing_local_model_folder_is_a_message(client, tmp_path):
    status, *_ = score(client, "a dog", choice=LOCAL_CHOICE, local_path=str(tmp_path / "absent"))
    assert status.startswith("⚠️") and "No such folder" in status


def test_threshold_moves_kept_rows_without_rescoring():
    scores = np.array([0.9, 0.4, np.nan, 0.6], dtype=np.float32)
    rows = ScoredRows(CaptionTable("txt", "caption", ["a", "b", "", "d"]), scores, "lite", "the text box")
    assert list(results_frame(rows, 0.5, ORDERS[0])["kept"]) == ["yes", "no", "no", "yes"]
    assert list(results_frame(rows, 0.7, ORDERS[1])["#"]) == [1, 4, 2, 3]
    assert "keeps **1 of 4** (25%)" in filter_summary(rows, 0.7) and "1 blank, never kept" in filter_summary(rows, 0.7)


def test_metric_space_app_computes_through_the_evaluate_module():
    import evaluate

    from modeling_icc import metric_path
    from modeling_icc.apps.gradio import build_metric_demo

    demo = build_metric_demo(evaluate.load(metric_path()))
    demo.launch(prevent_thread_lock=True, server_name="127.0.0.1", ssr_mode=False, quiet=True)
    try:
        metric_client = Client(demo.local_url, verbose=False)
        result = metric_client.predict("\n".join(CAPTIONS), "lite", "all", 0.5, api_name="/compute")
        empty = metric_client.predict("", "lite", "all", 0.5, api_name="/compute")
    finally:
        demo.close()
    np.testing.assert_allclose(result["icc_scores"], LiteScorer().score(CAPTIONS), atol=1e-6)
    assert result["icc_model"] == "lite" and 0 < result["kept_fraction"] < 1 and "icc_quantiles" in result
    assert "Nothing to score" in empty["error"]


# -- real browser -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    if not (CHROMIUM and CHROMEDRIVER):
        reason = "needs Debian's chromium and chromium-driver (apt-get install -y chromium chromium-driver)"
        if os.environ.get("CI"):
            pytest.fail(reason + "; .ci/run installs them")
        pytest.skip(reason)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}",
        "--window-size=1280,2000",
    ):
        options.add_argument(argument)
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER, log_output=subprocess.DEVNULL))
    yield driver
    driver.quit()


def _open(browser, app_url):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(app_url)
    wait = WebDriverWait(browser, 60)
    box = wait.until(ec.element_to_be_clickable((By.CSS_SELECTOR, "#icc-captions textarea")))
    return wait, box


def test_browser_scores_pasted_captions_and_highlights_words(browser, app_url, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    wait, box = _open(browser, app_url)
    box.send_keys("\n".join(CAPTIONS))
    browser.find_element(By.ID, "icc-score-button").click()
    wait.until(ec.presence_of_element_located((By.CSS_SELECTOR, "#icc-highlights .icc-caption")))
    wait.until(ec.text_to_be_present_in_element((By.ID, "icc-table"), CAPTIONS[-1]))
    browser.save_screenshot(str(tmp_path / "space_scored.png"))
    assert (tmp_path / "space_scored.png").stat().st_size > 10_000
    status = " ".join(browser.find_element(By.ID, "icc-status").text.split())
    # the default choice is the published student; offline it falls back to lite and says so
    assert "Scored 3 captions from the text box with lite" in status and "fallback model 'lite'" in status
    expected = LiteScorer().score(CAPTIONS)
    table_text = browser.find_element(By.ID, "icc-table").text
    assert all(f"{value:.3f}" in table_text for value in expected)
    captions = browser.find_elements(By.CSS_SELECTOR, "#icc-highlights .icc-caption")
    assert len(captions) == 3
    words = captions[0].find_elements(By.CSS_SELECTOR, ".icc-word")
    assert [w.text for w in words][:2] == ["a", "man"] and all(w.get_attribute("data-contribution") for w in words)


def test_browser_example_click_fills_the_box(browser, app_url):
    from selenium.webdriver.common.by import By

    wait, box = _open(browser, app_url)
    first = "bougainvillea climbing up the wall of a villa"
    browser.find_element(By.XPATH, f"//button[normalize-space()='{first}']").click()
    wait.until(lambda _: box.get_attribute("value") == first)


def test_browser_empty_box_shows_a_message(browser, app_url, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    wait, _ = _open(browser, app_url)
    browser.find_element(By.ID, "icc-score-button").click()
    wait.until(ec.text_to_be_present_in_element((By.ID, "icc-status"), "Nothing to score"))
    browser.save_screenshot(str(tmp_path / "space_empty.png"))
    assert "Traceback" not in browser.find_element(By.TAG_NAME, "body").text


def test_browser_malformed_upload_shows_a_message(browser, app_url, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"caption": "ok"}\n{"caption": broken\n', encoding="utf-8")
    wait, _ = _open(browser, app_url)
    browser.find_element(By.CSS_SELECTOR, "#icc-upload input[type=file]").send_keys(str(bad))
    wait.until(ec.text_to_be_present_in_element((By.ID, "icc-upload"), ".jsonl"))  # the name renders split
    browser.find_element(By.ID, "icc-score-button").click()
    wait.until(ec.text_to_be_present_in_element((By.ID, "icc-status"), "line 2 is not valid JSON"))
    assert "Traceback" not in browser.find_element(By.TAG_NAME, "body").text
