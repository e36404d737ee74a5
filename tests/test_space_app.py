"""The Spaces demo, launched for real: driven with gradio_client, and in headless Debian Chromium."""

import os

os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")

import csv
import gzip
import json
import shutil
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

gr = pytest.importorskip("gradio", reason="the Space needs the 'space' extra (pip install -e '.[space-test]')")
from gradio_client import Client, handle_file  # noqa: E402

from modeling_icc import LiteScorer, load_scorer  # noqa: E402
from modeling_icc.apps import gradio as space  # noqa: E402
from modeling_icc.apps.gradio import (  # noqa: E402
    DEFAULT_CHOICE,
    HIGHLIGHT_ROWS,
    LITE_CHOICE,
    MAX_CAPTION_CHARS,
    MAX_FILE_BYTES,
    MAX_REQUEST_CHARS,
    MAX_ROWS,
    MAX_UPLOAD_BYTES,
    MINI_CHOICE,
    MODELS_ENV,
    ORDERS,
    PUBLISHED_CHOICE,
    REFUSED_MODEL,
    TABLE_HEADERS,
    ScoredRows,
    build_demo,
    build_metric_demo,
    captions_from_file,
    captions_from_text,
    filter_summary,
    launch_space,
    model_choices,
    results_frame,
    score_table_rows,
    write_download,
)
from modeling_icc.curation.io.tables import CaptionTable  # noqa: E402
from modeling_icc.utils.errors import UserInputError  # noqa: E402

# gradio's queue calls pandas options that pandas 3 deprecates; not ours to fix.
pytestmark = pytest.mark.filterwarnings("ignore::Warning:gradio.queueing")

CAPTIONS = ["a man with a white shirt", "a great method of quantifying concreteness", "a red car on a street"]
TINY_CHOICE = "tiny student (test)"
CHROMIUM, CHROMEDRIVER = shutil.which("chromium"), shutil.which("chromedriver")


#: Values a visitor may send for the model that name no listed model: folders of the server, a Hub id.
UNLISTED = ["/root/.ssh", "/nope", "local path", "someone/any-model"]


def launched(demo):
    """``demo`` served on 127.0.0.1 as a Space serves it (``launch_space``: the upload cap)."""
    launch_space(demo, prevent_thread_lock=True, server_name="127.0.0.1", ssr_mode=False, quiet=True)
    return demo


@pytest.fixture(scope="module")
def app_url(tiny_student_dir):
    demo = launched(build_demo(models={**model_choices(), TINY_CHOICE: str(tiny_student_dir)}))
    yield demo.local_url
    demo.close()


@pytest.fixture(scope="module")
def client(app_url) -> Client:
    return Client(app_url, verbose=False, download_files=False)


def score(client, text="", upload=None, choice=LITE_CHOICE, order=ORDERS[0], threshold=0.5):
    file = handle_file(str(upload)) if upload else None
    return client.predict(text, file, choice, "caption", order, threshold, api_name="/score")


@pytest.fixture
def load_calls(monkeypatch) -> list:
    """Every model the app asks ``load_scorer`` for, in this test (the app runs in this process)."""
    calls = []

    def spy(name_or_path=None, *args, **kwargs):
        calls.append(name_or_path)
        return load_scorer(name_or_path, *args, **kwargs)

    monkeypatch.setattr(space, "load_scorer", spy)
    return calls


def refusal(call, sent: str) -> str:
    """What the app answered ``call`` (its status, or the error the client raised), ``sent`` masked."""
    try:
        answer = call()
    except Exception as error:  # gradio's own check of a dropdown value answers with an error
        answer = str(error)
    answer = answer[0] if isinstance(answer, tuple) else answer
    return json.dumps(answer).replace(sent, "<sent>")


def handler(demo, api_name: str):
    """The function behind ``api_name``, to call as a client could if gradio checked nothing."""
    return next(block.fn for block in demo.fns.values() if block.api_name == api_name)


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


def test_uploaded_jsonl_and_a_student_folder_the_owner_listed(client, tmp_path, tiny_student_dir):
    source = tmp_path / "captions.jsonl"
    source.write_text("".join(json.dumps({"caption": c, "id": i}) + "\n" for i, c in enumerate(CAPTIONS)))
    status, table, _, highlights, _ = score(client, upload=source, choice=TINY_CHOICE)
    assert f"with `{tiny_student_dir}`" in status and len(table["data"]) == 3
    assert highlights.count('class="icc-caption"') == 3  # occlusion explanations of the student


def test_unlisted_models_get_one_answer_and_are_never_loaded(app_url, client, load_calls):
    answers = {refusal(lambda value=value: score(client, "a dog", choice=value), value) for value in UNLISTED}
    assert len(answers) == 1 and "config.json" not in answers.pop()  # /root/.ssh and /nope answer alike
    assert load_calls == []
    status, *_ = score(client, "a dog", choice=LITE_CHOICE)  # a listed model works
    assert "with `lite`" in status and load_calls == ["lite", "lite"]  # scores, then explains


def test_the_score_handler_itself_refuses_unlisted_models(load_calls):
    score_handler = handler(build_demo(), "score")
    answers = [score_handler("a dog", None, value, "caption", ORDERS[0], 0.5)[0] for value in UNLISTED]
    assert answers == [f"⚠️ **{REFUSED_MODEL}**"] * len(UNLISTED) and load_calls == []


def test_the_owner_lists_the_models(monkeypatch, tiny_student_dir):
    assert list(model_choices().values()) == ["mini", "lite", "moranyanuka/icc"]
    monkeypatch.setenv(MODELS_ENV, f" ORG/icc-student , {tiny_student_dir},")
    assert list(model_choices().values()) == [
        "mini",
        "lite",
        "moranyanuka/icc",
        "ORG/icc-student",
        str(tiny_student_dir),
    ]
    assert model_choices(["lite", "ORG/x"]) == {LITE_CHOICE: "lite", "ORG/x": "ORG/x"}  # a list replaces the default
    with pytest.raises(ValueError, match="at least one model"):
        model_choices([])
    (selector,) = [b for b in build_demo(models=["lite"]).blocks.values() if getattr(b, "elem_id", None) == "icc-model"]
    assert [value for _, value in selector.choices] == [LITE_CHOICE] and selector.value == LITE_CHOICE


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "Nothing to score"),
        ("   \n\n ", "Nothing to score"),
        ("a dog\n" * 10_000, f"10,000 lines pasted: the demo scores at most {MAX_ROWS:,}"),
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


def test_damaged_compressed_data_is_a_message(client, tmp_path):
    path = tmp_path / "damaged.txt"
    path.write_bytes(gzip.compress(b"a dog\n" * 1_000)[:-40] + b"\x00" * 40)
    status, *_ = score(client, upload=path)
    assert status.startswith("⚠️") and "damaged.txt" in status and "compressed data is damaged" in status


def test_the_published_student_falls_back_to_lite_with_a_notice_where_it_cannot_load(client):
    status, table, _, highlights, _ = score(client, "\n".join(CAPTIONS), choice=PUBLISHED_CHOICE)
    assert "with `lite`" in status  # the summary names the model that scored
    assert "ℹ️ the ICC model 'moranyanuka/icc' cannot be loaded here" in status
    np.testing.assert_allclose([row["ICC"] for row in rows_of(table)], LiteScorer().score(CAPTIONS), atol=5e-4)
    assert highlights.count('class="icc-caption"') == 3


def test_the_default_choice_is_mini_and_the_published_student_stays_a_choice():
    choices = model_choices()
    assert DEFAULT_CHOICE == MINI_CHOICE and choices[DEFAULT_CHOICE] == "mini"
    assert choices[PUBLISHED_CHOICE] == "moranyanuka/icc" and PUBLISHED_CHOICE.startswith("moranyanuka/icc ")
    (selector,) = [block for block in build_demo().blocks.values() if getattr(block, "elem_id", None) == "icc-model"]
    assert selector.value == MINI_CHOICE


def test_the_mini_choice_scores_with_mini(client):
    status, table, *_ = score(client, "\n".join(CAPTIONS), choice=MINI_CHOICE)
    assert "with `mini`" in status and "cannot be loaded" not in status
    expected = load_scorer("mini", cache=True).score(CAPTIONS)
    np.testing.assert_allclose([row["ICC"] for row in rows_of(table)], expected, atol=1e-3)  # the table rounds


# -- caps: each checked before any scoring --------------------------------------------------


def assert_refused(answer, *phrases):
    status, table, _, highlights, download = answer
    assert status.startswith("⚠️") and all(phrase in status for phrase in phrases), status
    assert table["data"] == [] and highlights == "" and download is None


def test_an_upload_over_the_byte_cap_is_refused_while_it_arrives(app_url, client, tmp_path, load_calls):
    import httpx

    big = tmp_path / "big.txt"
    with big.open("wb") as handle:
        handle.truncate(MAX_UPLOAD_BYTES + 1)  # sparse: no time spent writing it
    with big.open("rb") as handle:  # as a client that skips gradio_client's own check would send it
        answer = httpx.post(f"{app_url}gradio_api/upload", files={"files": handle}, timeout=60)
    assert answer.status_code == 413 and "maximum allowed size" in answer.text
    with pytest.raises(ValueError, match=f"exceeds the maximum file size of {MAX_UPLOAD_BYTES} bytes"):
        score(client, upload=big)
    assert load_calls == []


def gzip_bomb(path, megabytes: int = 200):
    """``megabytes`` MB of zeros gzip-compressed into ``path`` (about 200 KB), written a block at a time."""
    block = bytes(1 << 20)
    with gzip.open(path, "wb", compresslevel=1) as handle:
        for _ in range(megabytes):
            handle.write(block)
    return path


def test_a_gzip_bomb_is_refused_quickly_with_bounded_memory(tmp_path):
    bomb = gzip_bomb(tmp_path / "pool.txt")  # named .txt: the content says gzip
    assert bomb.stat().st_size < MAX_UPLOAD_BYTES
    tracemalloc.start()
    start = time.perf_counter()
    try:
        with pytest.raises(UserInputError, match=f"more than {MAX_FILE_BYTES / 1e6:g} MB once decompressed"):
            captions_from_file(bomb)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert time.perf_counter() - start < 10 and peak < 16 * 2**20  # read as a stream: stopped at the cap


def test_a_gzip_bomb_upload_is_refused_with_a_message(client, tmp_path, load_calls):
    start = time.perf_counter()
    answer = score(client, upload=gzip_bomb(tmp_path / "pool.txt"))  # the upload box takes no .gz
    assert_refused(answer, "pool.txt", "once decompressed")
    assert time.perf_counter() - start < 30 and load_calls == []


def test_a_file_over_the_row_cap_is_refused_before_it_is_read_whole(client, tmp_path, load_calls):
    rows = tmp_path / "rows.jsonl"  # line 5,000 is broken: refused for its rows before it is reached
    rows.write_text('{"caption": "a dog"}\n' * 4_999 + "{broken\n", encoding="utf-8")
    assert_refused(score(client, upload=rows), "rows.jsonl", f"more than {MAX_ROWS:,} rows")
    assert load_calls == []


def test_a_parquet_file_over_the_row_cap_is_refused(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "rows.parquet"
    pq.write_table(pa.table({"caption": ["a dog"] * (MAX_ROWS + 1)}), path)
    with pytest.raises(UserInputError, match=f"more than {MAX_ROWS:,} rows"):
        captions_from_file(path)


def test_a_caption_over_the_character_cap_is_refused(client, tmp_path, load_calls):
    long = "a dog on a beach " * 1_765  # 30,005 characters: one request must not hold the server
    assert_refused(score(client, f"a cat\n{long}"), "caption 2", f"{MAX_CAPTION_CHARS:,} characters")
    source = tmp_path / "long.csv"
    source.write_text(f"caption\na cat\n{long}\n", encoding="utf-8")
    assert_refused(score(client, upload=source), "row 2 of long.csv", f"{MAX_CAPTION_CHARS:,} characters")
    assert load_calls == []


def test_a_text_box_over_the_character_cap_is_refused(client, load_calls):
    lines = ["a dog on a beach " * 50] * (MAX_REQUEST_CHARS // 850 + 1)  # each within the caption cap
    text = "\n".join(lines)
    assert len(lines) <= MAX_ROWS and len(text) > MAX_REQUEST_CHARS
    assert_refused(score(client, text), f"{len(text):,} characters", f"{MAX_REQUEST_CHARS:,}")
    assert load_calls == []


def test_the_page_states_the_caps():
    page = " ".join(str(getattr(block, "value", "")) for block in build_demo().blocks.values())
    for figure in (f"{MAX_UPLOAD_BYTES / 1e6:g} MB", f"{MAX_FILE_BYTES / 1e6:g} MB", f"{MAX_ROWS:,}"):
        assert figure in page
    assert f"{MAX_CAPTION_CHARS:,} characters" in page and f"{MAX_REQUEST_CHARS:,} characters" in page
    assert f"first {HIGHLIGHT_ROWS} rows" in page and "refused" in page


def test_threshold_moves_kept_rows_without_rescoring():
    scores = np.array([0.9, 0.4, np.nan, 0.6], dtype=np.float32)
    rows = ScoredRows(CaptionTable("txt", "caption", ["a", "b", "", "d"]), scores, "lite", "the text box")
    assert list(results_frame(rows, 0.5, ORDERS[0])["kept"]) == ["yes", "no", "no", "yes"]
    assert list(results_frame(rows, 0.7, ORDERS[1])["#"]) == [1, 4, 2, 3]
    assert "keeps **1 of 4** (25%)" in filter_summary(rows, 0.7) and "1 blank, never kept" in filter_summary(rows, 0.7)


def test_captions_in_another_language_are_named_and_not_called_blank(tmp_path):
    captions = ["a red car parked on a street", "ein rotes Auto, das an einer Straße parkt", ""]
    rows = score_table_rows(captions_from_text("\n".join(captions)), "lite", "the text box")
    frame = results_frame(rows, 0.5, ORDERS[0])
    assert list(frame.columns) == TABLE_HEADERS and list(frame["language"]) == ["en", "de"]  # the blank line dropped
    assert "(1 in a language `lite` does not read, never kept)" in filter_summary(rows, 0.5)
    download = Path(write_download(rows, 0.5)).read_text("utf-8").splitlines()
    assert download[0] == "caption,icc_score,icc_model,icc_language,icc_kept" and download[2].endswith(",lite,de,False")


@pytest.fixture(scope="module")
def measurement():
    import evaluate

    from modeling_icc import metric_path

    return evaluate.load(metric_path())


@pytest.fixture
def metric_load_calls(monkeypatch, load_calls) -> list:
    """``load_calls``, also counting the models the evaluate module loads."""
    from modeling_icc.hub import measurement as logic

    monkeypatch.setattr(logic, "load_scorer", space.load_scorer)
    return load_calls


def test_metric_space_app_computes_through_the_evaluate_module(measurement, metric_load_calls):
    demo = launched(build_metric_demo(measurement))
    try:
        metric_client = Client(demo.local_url, verbose=False)
        result = metric_client.predict("\n".join(CAPTIONS), "lite", "all", 0.5, api_name="/compute")
        empty = metric_client.predict("", "lite", "all", 0.5, api_name="/compute")
        long = metric_client.predict("a dog " * 5_000, "lite", "all", 0.5, api_name="/compute")
        refused = {
            refusal(lambda value=value: metric_client.predict("a dog", value, "all", 0.5, api_name="/compute"), value)
            for value in UNLISTED
        }
    finally:
        demo.close()
    np.testing.assert_allclose(result["icc_scores"], LiteScorer().score(CAPTIONS), atol=1e-6)
    assert result["icc_model"] == "lite" and 0 < result["kept_fraction"] < 1 and "icc_quantiles" in result
    assert "Nothing to score" in empty["error"] and f"{MAX_CAPTION_CHARS:,} characters" in long["error"]
    assert len(refused) == 1 and "config.json" not in refused.pop() and metric_load_calls == ["lite"]


def test_the_metric_handler_itself_refuses_unlisted_models(measurement, metric_load_calls):
    compute = handler(build_metric_demo(measurement), "compute")
    answers = [compute("a dog", value, "all", 0.5) for value in UNLISTED]
    assert answers == [{"error": REFUSED_MODEL}] * len(UNLISTED) and metric_load_calls == []


def test_publish_doc_states_the_caps_of_the_code():
    doc = (Path(__file__).parents[1] / "docs" / "publish.md").read_text(encoding="utf-8")
    section = doc[doc.index("## 5. The Spaces demo") : doc.index("## Tests")]
    for cap, figure in [
        ("upload", f"{MAX_UPLOAD_BYTES / 1e6:g} MB"),
        ("upload, decompressed", f"{MAX_FILE_BYTES / 1e6:g} MB"),
        ("captions", f"{MAX_ROWS:,}"),
        ("characters per caption", f"{MAX_CAPTION_CHARS:,}"),
        ("characters per request", f"{MAX_REQUEST_CHARS:,}"),
    ]:
        assert f"| {cap} | {figure} |" in section
    assert f"`{MODELS_ENV}`" in section


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
    # the default choice is mini, which needs no download: no fallback
    assert "Scored 3 captions from the text box with mini" in status and "fallback" not in status
    expected = load_scorer("mini", cache=True).score(CAPTIONS)
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


def test_downloads_live_in_one_folder_that_expires_and_goes_with_the_process(monkeypatch, tmp_path):
    """A long-running Space does not fill /tmp: downloads share one folder, old ones are removed by later
    requests, and the folder is gone when the server process exits."""
    rows = ScoredRows(space.captions_from_text("a dog"), np.array([0.9], dtype=np.float32), "lite", "text")
    first = Path(space.write_download(rows, 0.5))
    assert first.read_text().splitlines()[0].startswith("caption,icc_score")
    monkeypatch.setattr(space, "DOWNLOAD_LIFETIME_S", -1)
    second = Path(space.write_download(rows, 0.5))
    assert first.parent.parent == second.parent.parent == Path(space.download_folder().name)
    assert not first.exists() and second.is_file()
    program = (
        "from pathlib import Path; import numpy as np\n"
        "from modeling_icc.apps import gradio as space\n"
        "rows = space.ScoredRows(space.captions_from_text('a dog'), np.array([0.9], 'float32'), 'lite', 'x')\n"
        "print(Path(space.write_download(rows, 0.5)).parent.parent)\n"
    )
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, env=env, check=True)
    assert Path(done.stdout.strip()).parent == tmp_path and not Path(done.stdout.strip()).exists()
