"""The memory inspector in a real headless Chromium (Debian's chromium + chromium-driver)
against a real uvicorn on loopback: list → search → open → forget → history, in English
and Chinese, at 1280×800 and at phone width, with the network beyond loopback cut off.

Set ENGRAM_UI_SCREENSHOTS=<folder> to also write the screenshots of docs/INSPECTOR.md."""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import uvicorn
from cryptography.fernet import Fernet

from engram import FakeClock, FakeHashEmbedder, Memory, Scope, Settings, Source
from engram.server.http import create_app
from engram.store.sqlite import SQLiteStore

CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
if not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()):
    pytest.skip("chromium and chromium-driver are not installed (apt-get install -y chromium chromium-driver; "
                ".ci/run installs them)", allow_module_level=True)
webdriver = pytest.importorskip("selenium.webdriver")
from selenium.common.exceptions import StaleElementReferenceException, TimeoutException  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support import expected_conditions as EC  # noqa: E402
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402

KEY = "key-acme-inspector-0123"
ANA = Scope.for_user("acme", "ana")
WAIT_S = 60  # how long to poll for the page to settle (not a speed requirement; a loaded CI machine is slow)
SHOTS = os.environ.get("ENGRAM_UI_SCREENSHOTS")


FERNET_KEY = Fernet.generate_key()
PHONE = "+86 138 1234 5678"


def seed(memory: Memory) -> dict[str, str]:
    tea = memory.remember("Prefers green tea in the afternoon", ANA, kind="preference", tags=["drinks"],
                          source=Source(actor="user", thread_id="t-2024-05", message_id="m-17"))
    memory.update(tea.id, ANA, content="Prefers jasmine tea in the afternoon", reason="she changed her mind")
    memory.remember("Lives in Lisbon and works as a baker", ANA, source=Source(thread_id="t-2024-04"))
    memory.remember("Reports go through supervisor and finance", ANA, kind="rule")
    memory.remember("用户喜欢简洁的报告", Scope.for_user("acme", "张三"), kind="preference")
    memory.remember("Bob's private note", Scope.for_user("acme", "bob"))
    memory.remember("Answers formally", Scope.for_agent("acme", "concierge"), kind="rule")
    memory.context("what does ana drink in the afternoon?", ANA, answer_id="answer-42", thread_id="t-2024-06")
    token = Fernet(FERNET_KEY).encrypt(PHONE.encode()).decode()
    memory.remember("Reach Carl at carl@example.com or [PHONE#1]", Scope.for_user("acme", "carl"),
                    sensitivity="personal", metadata={"pii_encrypted": {"[PHONE#1]": token}})
    return {"tea": tea.id}


def serve(app) -> tuple[str, uvicorn.Server, threading.Thread]:
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    uv = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=uv.run, kwargs={"sockets": [listener]}, daemon=True)
    thread.start()
    while not uv.started:
        assert thread.is_alive(), "uvicorn stopped before it started"
        time.sleep(0.02)
    return f"http://127.0.0.1:{listener.getsockname()[1]}", uv, thread


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[str, dict[str, str], Memory]]:
    saved = os.environ.get("ENGRAM_ENCRYPTION_KEY")
    os.environ["ENGRAM_ENCRYPTION_KEY"] = FERNET_KEY.decode()  # the server decrypts for keys that may reveal
    folder = tempfile.mkdtemp(prefix="engram-ui-")
    memory = Memory(SQLiteStore(str(Path(folder) / "ui.db")), embedder=FakeHashEmbedder(), clock=FakeClock(),
                    settings=Settings(auto_worker=False))
    ids = seed(memory)
    base, uv, thread = serve(create_app(memory, api_keys={KEY: "acme[reveal]"}))  # the key may reveal (audited)
    yield base, ids, memory
    uv.should_exit = True
    thread.join()
    memory.close()
    shutil.rmtree(folder, ignore_errors=True)
    if saved is None:
        os.environ.pop("ENGRAM_ENCRYPTION_KEY", None)
    else:
        os.environ["ENGRAM_ENCRYPTION_KEY"] = saved


@pytest.fixture(scope="module")
def browser() -> Iterator[webdriver.Chrome]:
    profile = tempfile.mkdtemp(prefix="engram-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage", f"--user-data-dir={profile}", "--window-size=1280,800",
                 "--lang=en-US", "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


def wait(driver, condition):
    """Poll until the page settles; an element re-rendered meanwhile is looked up again. A page
    that never settles fails with what it shows (its toast, its text) to say why."""
    try:
        return WebDriverWait(driver, WAIT_S, ignored_exceptions=(StaleElementReferenceException,)).until(condition)
    except TimeoutException as exc:
        shown = driver.execute_script(
            "const toast = document.querySelector('.toast'); const detail = document.querySelector('[data-testid=detail]');"
            "return [toast ? toast.textContent : '', detail ? String(detail.hidden) : '-',"
            " document.body.innerText.slice(0, 600)]")
        raise TimeoutException(f"the page did not settle; last toast: {shown[0]!r}; detail hidden: {shown[1]}; "
                               f"page: {shown[2]!r}") from exc


def by_id(driver, testid: str, *, many: bool = False):
    selector = f"[data-testid='{testid}']"
    return driver.find_elements(By.CSS_SELECTOR, selector) if many else driver.find_element(By.CSS_SELECTOR, selector)


def visible(testid: str):
    return EC.visibility_of_element_located((By.CSS_SELECTOR, f"[data-testid='{testid}']"))


def rows(driver, testid: str = "memory-row") -> list[str]:
    """The texts of the shown rows, read in one go (the list may re-render at any time)."""
    return driver.execute_script(
        "return [...document.querySelectorAll(arguments[0])].map(row => row.querySelector('.content').textContent)",
        f"[data-testid='{testid}']")


def pick_namespace(driver, label: str) -> None:
    select = Select(by_id(driver, "namespace"))
    wait(driver, lambda d: label in [o.text for o in select.options])
    select.select_by_visible_text(label)


def shot(driver, name: str) -> None:
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        driver.save_screenshot(str(Path(SHOTS) / f"inspector-{name}.png"))


def open_page(driver, base: str, query: str = "lang=en") -> None:
    driver.get(f"{base}/ui/?{query}")
    driver.execute_script("sessionStorage.clear()")
    driver.get(f"{base}/ui/?{query}")


def sign_in(driver) -> None:
    wait(driver, visible("key-form"))
    by_id(driver, "key-input").send_keys(KEY)
    by_id(driver, "key-form").submit()
    wait(driver, lambda d: by_id(d, "tenant").text.startswith("tenant: acme"))


def show_scope(driver, base: str, namespace: str) -> None:
    """On a desktop-sized window, sign in and pick a namespace."""
    driver.set_window_size(1280, 800)
    open_page(driver, base)
    sign_in(driver)
    pick_namespace(driver, namespace)


def open_the_one_memory(driver, base: str, namespace: str, content: str) -> None:
    """Sign in, pick a namespace that holds one memory with personal data, open it."""
    show_scope(driver, base, namespace)
    wait(driver, lambda d: rows(d) == [content])
    by_id(driver, "memory-row", many=True)[0].click()
    wait(driver, visible("pii-note"))


def test_list_search_open_forget_history(server, browser):
    base, ids, memory = server
    driver = browser
    show_scope(driver, base, "users / ana")
    assert driver.title == "engram inspector"
    wait(driver, lambda d: len(rows(d)) == 3)
    assert "Bob's private note" not in rows(driver)
    shot(driver, "list-desktop")

    Select(by_id(driver, "filter-kind")).select_by_value("preference")
    by_id(driver, "filters").submit()
    wait(driver, lambda d: rows(d) == ["Prefers jasmine tea in the afternoon"])
    Select(by_id(driver, "filter-kind")).select_by_value("")
    by_id(driver, "filters").submit()
    wait(driver, lambda d: len(rows(d)) == 3)

    driver.find_element(By.CSS_SELECTOR, "[data-tab='search']").click()
    by_id(driver, "search-input").send_keys("jasmine tea afternoon")
    by_id(driver, "search-form").submit()
    wait(driver, lambda d: rows(d, "hit") and rows(d, "hit")[0] == "Prefers jasmine tea in the afternoon")
    hit = by_id(driver, "hit", many=True)[0]
    signals = {s.get_attribute("data-testid"): s.text for s in hit.find_elements(By.CSS_SELECTOR, ".signal")}
    assert set(signals) == {f"signal-{n}" for n in ("lexical", "vector", "relevance", "recency", "importance",
                                                     "validity", "overlap")}
    assert "lexical (BM25)" in signals["signal-lexical"] and float(hit.find_element(
        By.CSS_SELECTOR, "[data-testid='score']").text) > 0
    shot(driver, "search-desktop")

    hit.click()
    wait(driver, visible("detail"))
    assert by_id(driver, "detail-content").text == "Prefers jasmine tea in the afternoon"
    source = by_id(driver, "source").text
    assert "t-2024-05" in source and "m-17" in source
    versions = by_id(driver, "version", many=True)
    assert [v.get_attribute("data-operation") for v in versions] == ["update", "create"]
    diff = versions[0].find_element(By.CSS_SELECTOR, "[data-testid='diff']")
    assert diff.find_element(By.TAG_NAME, "ins").text == "jasmine" and diff.find_element(By.TAG_NAME, "del").text == "green"
    assert "she changed her mind" in versions[0].text
    assert "answer-42" in by_id(driver, "recalls").text and "t-2024-06" in by_id(driver, "recalls").text
    shot(driver, "detail-desktop")

    by_id(driver, "forget").click()
    by_id(driver, "reason-input").send_keys("ana asked to forget it")
    by_id(driver, "confirm-action").click()
    wait(driver, lambda d: by_id(d, "detail-status").text == "deleted")
    versions = by_id(driver, "version", many=True)
    assert versions[0].get_attribute("data-operation") == "forget"
    assert "ana asked to forget it" in versions[0].text
    assert "forget" in by_id(driver, "audit").text
    assert memory.get(ids["tea"], ANA).status.value == "deleted"
    driver.find_element(By.CSS_SELECTOR, "[data-tab='memories']").click()
    wait(driver, lambda d: len(rows(d)) == 2 and "Prefers jasmine tea in the afternoon" not in rows(d))

    by_id(driver, "restore").click()
    by_id(driver, "reason-input").send_keys("by mistake")
    by_id(driver, "confirm-action").click()
    wait(driver, lambda d: by_id(d, "detail-status").text == "active")
    wait(driver, lambda d: len(rows(d)) == 3)

    by_id(driver, "edit").click()
    content = by_id(driver, "edit-content")
    content.clear()
    content.send_keys("Prefers oolong tea in the afternoon")
    by_id(driver, "reason-input").send_keys("new favourite")
    by_id(driver, "confirm-action").click()
    wait(driver, lambda d: by_id(d, "detail-content").text == "Prefers oolong tea in the afternoon")
    assert memory.get(ids["tea"], ANA).version == 5
    assert not driver.find_elements(By.CSS_SELECTOR, "[data-tab='approvals']")  # the server offers none
    errors = [e for e in driver.get_log("browser") if e["level"] == "SEVERE" and "status of 401" not in e["message"]]
    assert not errors, errors  # the 401 is the first call, before the key was given


def test_personal_data_is_masked_until_revealed(server, browser):
    base, _, _ = server
    driver = browser
    open_the_one_memory(driver, base, "users / carl", "Reach Carl at [EMAIL] or [PHONE#1]")
    assert by_id(driver, "detail-content").text == "Reach Carl at [EMAIL] or [PHONE#1]"
    assert "carl@example.com" not in driver.page_source and PHONE not in driver.page_source
    shot(driver, "masked-desktop")
    by_id(driver, "reveal").click()
    by_id(driver, "reveal-reason").send_keys("support ticket 7")
    by_id(driver, "confirm-reveal").click()
    wait(driver, lambda d: by_id(d, "detail-content").text == f"Reach Carl at carl@example.com or {PHONE}")
    assert "revealed" in by_id(driver, "pii-note").text


# The whole tenant's list answer is held back until another scope's list is on screen; the page
# notes when the held request went out and when the app has read its answer (a task after it).
HOLD_THE_TENANT_LIST = """
const realFetch = window.fetch;
window.__tenantListAsked = false;
window.__tenantListAnswered = false;
const carlShown = () => new Promise((shown) => {
  const poll = () => ([...document.querySelectorAll("[data-testid=memory-row] .content")]
    .some((row) => row.textContent.startsWith("Reach Carl")) ? shown() : setTimeout(poll, 20));
  poll();
});
window.fetch = async (input, init) => {
  const url = new URL(String(input), location.origin);
  const tenantList = url.pathname === "/v1/memories" && !url.searchParams.has("namespace");
  if (!tenantList) return realFetch(input, init);
  window.__tenantListAsked = true;
  const response = await realFetch(input, init);
  await carlShown();
  const read = response.json.bind(response);
  response.json = async () => {
    const data = await read();
    setTimeout(() => { window.__tenantListAnswered = true; }, 0);
    return data;
  };
  return response;
};
"""


def test_a_late_answer_for_a_scope_left_meanwhile_does_not_replace_the_list(server, browser):
    """Picking a user while the whole tenant's list is still loading: the list stays the user's."""
    base, _, _ = server
    driver = browser
    show_scope(driver, base, "users / bob")
    wait(driver, lambda d: rows(d) == ["Bob's private note"])
    driver.execute_script(HOLD_THE_TENANT_LIST)
    pick_namespace(driver, "(whole tenant)")
    wait(driver, lambda d: d.execute_script("return window.__tenantListAsked"))
    pick_namespace(driver, "users / carl")
    wait(driver, lambda d: d.execute_script("return window.__tenantListAnswered"))
    assert rows(driver) == ["Reach Carl at [EMAIL] or [PHONE#1]"]
    assert by_id(driver, "overview").is_displayed() is False


def test_chinese_text_and_phone_width(server, browser):
    base, _, _ = server
    driver = browser
    driver.set_window_size(390, 844)
    open_page(driver, base, "lang=zh")
    wait(driver, visible("key-form"))
    assert "API 密钥" in by_id(driver, "key-form").text
    by_id(driver, "key-input").send_keys(KEY)
    by_id(driver, "key-form").submit()
    wait(driver, lambda d: by_id(d, "tenant").text.startswith("租户: acme"))
    assert driver.title == "engram 记忆查看器"
    pick_namespace(driver, "users / 张三")
    wait(driver, lambda d: rows(d) == ["用户喜欢简洁的报告"])
    chips = by_id(driver, "memory-row", many=True)[0].text
    assert "偏好" in chips and "有效" in chips
    assert driver.execute_script("return document.documentElement.scrollWidth <= window.innerWidth")
    shot(driver, "list-phone")
    by_id(driver, "memory-row", many=True)[0].click()
    wait(driver, visible("detail"))
    assert "版本历史" in by_id(driver, "detail").text
    assert driver.execute_script("return document.documentElement.scrollWidth <= window.innerWidth")
    shot(driver, "detail-phone")
    driver.set_window_size(1280, 800)


def test_api_docs_render_without_the_internet(server, browser):
    base, _, _ = server
    browser.get(f"{base}/docs")
    title = wait(browser, EC.visibility_of_element_located((By.CSS_SELECTOR, ".swagger-ui .info .title")))
    assert title.text.startswith("engram")
    loaded = browser.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
    assert loaded and all(url.startswith(base) for url in loaded), loaded


@pytest.fixture
def reviewing(tmp_path) -> Iterator[tuple[str, Memory]]:
    """A single-tenant server (its one caller may review) holding two org writes for a
    reviewer, a sampled write and a past conversation."""
    from engram import PendingApprovalError
    from engram.approval_rules import ApprovalRule, ApprovalRules

    rules = ApprovalRules((ApprovalRule("org memory", namespaces=("orgs/*",)),))
    memory = Memory(SQLiteStore(str(tmp_path / "p.db")), embedder=FakeHashEmbedder(), approvals=rules,
                    settings=Settings(auto_worker=False))
    for text in ("Remember Ana's allergy", "Offices close at 6pm"):
        with pytest.raises(PendingApprovalError):  # held for a reviewer: GET /v1/approvals lists it
            memory.remember(text, Scope.for_org("acme", "acme"))
    memory.remember("Ana takes the 8:10 train", ANA)
    memory.threads.record([{"role": "user", "content": "My printer shows E42"},
                           {"role": "assistant", "content": "Turn it off and on again."}], ANA,
                          thread_id="printer-help")
    base, uv, thread = serve(create_app(memory, api_keys=None, tenant="acme"))
    yield base, memory
    uv.should_exit = True
    thread.join()
    memory.close()


def open_panel(driver, base: str, panel: str, lang: str) -> None:
    driver.set_window_size(1280, 800)
    driver.get(f"{base}/ui/?lang={lang}")
    wait(driver, visible(f"panel-{panel}")).click()


def test_panels_appear_only_when_the_server_offers_them(reviewing, browser):
    base, _ = reviewing
    browser.set_window_size(1280, 800)
    browser.get(f"{base}/ui/?lang=en")
    tab = wait(browser, visible("panel-approvals"))
    assert tab.text == "Approvals" and by_id(browser, "panel-samples").text == "Write accuracy"
    assert by_id(browser, "panel-conversations").text == "Past conversations"  # GET /v1/threads (issue 13)


def test_a_reviewer_approves_edits_and_rejects_held_writes(reviewing, browser):
    base, memory = reviewing
    driver = browser
    open_panel(driver, base, "approvals", "en")
    wait(driver, lambda d: len(by_id(d, "pending", many=True)) == 2)
    card = next(c for c in by_id(driver, "pending", many=True) if "Offices close at 6pm" in c.text)
    assert "org memory" in card.text and "proposed by app" in card.text
    card.find_element(By.CSS_SELECTOR, "[data-testid='approve']").click()  # no reason: refused
    wait(driver, lambda d: "Say why" in by_id(d, "toast").text)
    content = card.find_element(By.CSS_SELECTOR, "[data-testid='decide-content']")
    content.clear()
    content.send_keys("Offices close at 18:00")
    card.find_element(By.CSS_SELECTOR, "[data-testid='decide-reason']").send_keys("24-hour clock")
    card.find_element(By.CSS_SELECTOR, "[data-testid='approve']").click()
    wait(driver, lambda d: len(by_id(d, "pending", many=True)) == 1)
    shot(driver, "approvals-desktop")
    last = by_id(driver, "pending", many=True)[0]
    last.find_element(By.CSS_SELECTOR, "[data-testid='decide-reason']").send_keys("not a company fact")
    last.find_element(By.CSS_SELECTOR, "[data-testid='reject']").click()
    wait(driver, lambda d: by_id(d, "panel-empty").text == "No change waits for a reviewer.")
    org = Scope.for_org("acme", "acme")
    assert [r.content for r in memory.list(org).items] == ["Offices close at 18:00"]
    decided = {p.record.content: p for p in memory.approvals.list(Scope("acme"), status=None)}
    assert decided["Offices close at 6pm"].decision_reason == "24-hour clock"
    assert decided["Remember Ana's allergy"].status.value == "rejected"
    assert decided["Remember Ana's allergy"].decision_reason == "not a company fact"
    assert decided["Remember Ana's allergy"].decided_by.startswith("http")  # the key that decided


def test_a_reviewer_judges_sampled_writes(reviewing, browser):
    base, memory = reviewing
    driver = browser
    open_panel(driver, base, "samples", "en")
    wait(driver, visible("queue-sample")).click()
    wait(driver, lambda d: any("Ana takes the 8:10 train" in c.text for c in by_id(d, "sample", many=True)))
    card = next(c for c in by_id(driver, "sample", many=True) if "Ana takes the 8:10 train" in c.text)
    card.find_element(By.CSS_SELECTOR, "[data-testid='decide-reason']").send_keys("it is the 8:40")
    card.find_element(By.CSS_SELECTOR, "[data-testid='verdict-wrong']").click()
    wait(driver, lambda d: not any("Ana takes the 8:10 train" in c.text for c in by_id(d, "sample", many=True)))
    [judged] = memory.quality.list(Scope("acme"), reviewed=True)
    assert (judged.sample.verdict.value, judged.sample.note) == ("wrong", "it is the 8:40")


def test_past_conversations_are_grouped_by_thread(reviewing, browser):
    base, _ = reviewing
    driver = browser
    open_panel(driver, base, "conversations", "zh")
    thread = wait(driver, lambda d: next((t for t in by_id(d, "thread", many=True) if "printer-help" in t.text), None))
    assert "2 轮" in thread.text and "users / ana" in thread.text
    thread.find_element(By.CSS_SELECTOR, "[data-testid='thread-open']").click()
    wait(driver, lambda d: len(by_id(d, "turn", many=True)) == 2)
    said = [t.text for t in by_id(driver, "turn", many=True)]
    assert said[0].startswith("用户") and "My printer shows E42" in said[0]
    assert said[1].startswith("助手") and "Turn it off and on again." in said[1]
    shot(driver, "conversations-zh")


def test_the_first_screen_shows_the_tenant_and_what_happened(server, browser):
    base, _, memory = server
    for _ in range(8):  # an agent's searches: one audit row per memory served, which flooded the feed
        memory.recall("what does ana drink in the afternoon?", ANA)
    driver = browser
    driver.set_window_size(1280, 800)
    open_page(driver, base)
    sign_in(driver)
    wait(driver, visible("overview"))
    users = wait(driver, lambda d: by_id(d, "overview-users", many=True))[0].text
    assert all(name in users for name in ("ana", "bob", "carl", "张三"))
    assert "concierge" in by_id(driver, "overview-agents").text
    activity = wait(driver, lambda d: by_id(d, "activity").text)
    assert "create" in activity and "update" in activity and "recall" not in activity  # changes stay visible
    recalls = wait(driver, lambda d: by_id(d, "recall", many=True))
    assert len(recalls) == 5 and "Lives in Lisbon and works as a baker" in recalls[0].text  # what was recalled
    recalls[0].find_element(By.CSS_SELECTOR, "[data-testid='recalled-open']").click()
    wait(driver, lambda d: "tea in the afternoon" in by_id(d, "detail").text)
    open_page(driver, base)
    sign_in(driver)
    wait(driver, visible("overview"))
    assert not by_id(driver, "empty", many=True)  # not "No memories here."
    shot(driver, "overview-desktop")
    next(b for b in by_id(driver, "pick-scope", many=True) if b.text == "ana").click()
    wait(driver, lambda d: len(rows(d)) == 3)
    assert by_id(driver, "overview").get_attribute("hidden") is not None


def test_chinese_labels_for_what_engram_wrote(server, browser):
    base, _, memory = server
    memory.add("I work at Contoso as a designer.", Scope.for_user("acme", "dora"), force=True)  # the pipeline writes
    driver = browser
    driver.set_window_size(1280, 800)
    open_page(driver, base, "lang=zh")
    wait(driver, visible("key-form"))
    by_id(driver, "key-input").send_keys(KEY)
    by_id(driver, "key-form").submit()
    wait(driver, lambda d: by_id(d, "tenant").text.startswith("租户: acme"))
    wait(driver, lambda d: "创建" in by_id(d, "activity").text)
    pick_namespace(driver, "users / dora")
    wait(driver, lambda d: len(rows(d)) >= 1)
    by_id(driver, "memory-row", many=True)[0].click()
    wait(driver, visible("detail"))
    [version] = by_id(driver, "version", many=True)
    assert "创建" in version.text and "抽取流水线" in version.text and "没有相似的记忆" in version.text
    assert "create" not in by_id(driver, "audit").text and "pipeline" not in by_id(driver, "audit").text
    shot(driver, "detail-zh")


def test_no_reveal_button_for_what_was_masked_when_written(server, browser):
    base, _, memory = server
    memory.remember("Write to [EMAIL] for invoices", Scope.for_user("acme", "erin"), sensitivity="personal")
    driver = browser
    open_the_one_memory(driver, base, "users / erin", "Write to [EMAIL] for invoices")
    note = by_id(driver, "pii-note")
    assert "masked when it was written" in note.text
    assert not by_id(driver, "reveal", many=True)  # the key may reveal, but nothing is stored to reveal


def test_the_profile_panel_lists_it_and_pins_or_unpins(reviewing, browser):
    """Issue 20: the profile (what context() always gives first) read and steered in the inspector."""
    base, memory = reviewing
    memory.remember("Allergic to peanuts", ANA)
    todo = memory.remember("Call the bank on Monday", ANA, kind="todo")
    driver = browser
    driver.set_window_size(1280, 800)
    driver.get(f"{base}/ui/?lang=en")
    pick_namespace(driver, "users / ana")
    wait(driver, visible("panel-profile")).click()
    wait(driver, lambda d: len(rows(d, "profile-row")) == 2)
    assert rows(driver, "profile-row") == ["Allergic to peanuts", "Ana takes the 8:10 train"]  # constraints first
    shot(driver, "profile")
    allergy = next(r for r in by_id(driver, "profile-row", many=True) if "peanuts" in r.text)
    allergy.find_element(By.CSS_SELECTOR, "[data-testid='profile-unpin']").click()
    wait(driver, lambda d: rows(d, "profile-row") == ["Ana takes the 8:10 train"])
    memory.update(todo.id, ANA, pinned=True)  # an app pins a to-do in; the panel shows it first
    by_id(driver, "panel-profile").click()
    wait(driver, lambda d: rows(d, "profile-row")[:1] == ["Call the bank on Monday"])
    assert [r.pinned for r in memory.profile(ANA)][:1] == [True]
