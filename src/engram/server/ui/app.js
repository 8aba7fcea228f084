// engram inspector: a plain client of the /v1 API (no build step, no CDN).
// Text from the server is only ever put in the page with textContent.
"use strict";

const engram = (() => {
  const TEXT = window.ENGRAM_TEXT;
  const params = new URLSearchParams(location.search);
  const lang = (params.get("lang") || navigator.language || "en").toLowerCase().startsWith("zh") ? "zh" : "en";
  const KINDS = ["fact", "preference", "rule", "conclusion", "todo", "episode", "file"];
  const STATUSES = ["active", "superseded", "expired", "deleted"];
  const SIGNALS = ["lexical", "vector", "relevance", "recency", "importance", "validity", "overlap"];
  const PAGE = 50;
  const state = { key: sessionStorage.getItem("engram.key") || "", me: null, paths: new Set(),
                  namespace: [], namespaces: [], nested: false, offset: 0, open: null, panels: [] };
  const REVEAL_PATH = "/v1/memories/{record_id}/reveal";  // issue 14: an audited reveal, permission "reveal"

  // -- text ------------------------------------------------------------------------------
  function t(path) {
    const found = path.split(".").reduce((node, part) => (node == null ? undefined : node[part]), TEXT[lang]);
    return found === undefined ? path : found;
  }

  function translatePage(root = document) {
    document.documentElement.lang = lang === "zh" ? "zh-CN" : "en";
    document.title = t("title");
    root.querySelectorAll("[data-i18n]").forEach((el) => { el.textContent = t(el.dataset.i18n); });
    root.querySelectorAll("[data-i18n-placeholder]").forEach((el) => { el.placeholder = t(el.dataset.i18nPlaceholder); });
  }

  // -- DOM helpers -------------------------------------------------------------------------
  function el(tag, attrs = {}, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs)) {
      if (value === undefined || value === null || value === false) continue;
      if (name === "class") node.className = value;
      else if (name === "text") node.textContent = value;
      else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
      else node.setAttribute(name, value === true ? "" : value);
    }
    for (const child of children.flat(Infinity)) {
      if (child !== null && child !== undefined && child !== false) {
        node.append(child instanceof Node ? child : document.createTextNode(String(child)));
      }
    }
    return node;
  }
  const $ = (selector) => document.querySelector(selector);
  const when = (iso) => (iso ? new Date(iso).toLocaleString(lang === "zh" ? "zh-CN" : "en-GB") : "");
  const chip = (text, cls) => el("span", { class: `chip ${cls || ""}`, text });

  // What engram wrote (operations, actors, its own reasons) in the page's language; a person's words stay theirs.
  const opLabel = (operation) => TEXT[lang].ops[operation] || operation;
  function actorLabel(actor) {
    if (!actor) return "";
    const [head, ...rest] = actor.split(":");
    const named = TEXT[lang].actors[head] || head;
    if (!rest.length) return named;
    return lang === "zh" ? `${named}（${rest.join(":")}）` : `${named} (${rest.join(":")})`;
  }
  const reasonLabel = (reason) => (reason ? TEXT[lang].reasons.reduce((text, [pattern, into]) =>
    text.replace(new RegExp(pattern), into), reason) : reason);

  function toast(message, isError = false) {
    const box = $(".toast");
    box.textContent = message;
    box.classList.toggle("error", isError);
    box.hidden = false;
    clearTimeout(toast.timer);
    toast.timer = setTimeout(() => { box.hidden = true; }, 4000);
  }

  // -- the API -----------------------------------------------------------------------------
  async function api(method, path, { query = {}, body } = {}) {
    const url = new URL(path, location.origin);
    for (const [name, value] of Object.entries(query)) {
      for (const item of Array.isArray(value) ? value : [value]) {
        if (item !== undefined && item !== null && item !== "") url.searchParams.append(name, item);
      }
    }
    const headers = { Accept: "application/json" };
    if (state.key) headers.Authorization = `Bearer ${state.key}`;
    if (body !== undefined) headers["Content-Type"] = "application/json";
    const response = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const data = response.headers.get("content-type")?.includes("json") ? await response.json() : null;
    if (response.status === 401) {
      $("[data-testid=key-form]").hidden = false;
      $("[data-testid=key-input]").focus();
      throw new NeedKey(t("needKey"));
    }
    if (!response.ok) throw new Error(data ? `${data.error}: ${data.message}` : `${response.status}`);
    return data;
  }

  function scopeQuery() {
    return { namespace: state.namespace.length ? state.namespace : undefined };
  }

  function viewQuery() {
    return { mask: "true" };  // personal data is shown masked; revealing it is an audited act (piiNote)
  }

  class NeedKey extends Error {}

  // The newest request of a kind (the list, the detail, a search) wins: an answer that comes
  // back after the user moved on (picked another scope, closed the detail) is dropped.
  const turns = {};
  function newTurn(kind) {
    turns[kind] = (turns[kind] || 0) + 1;
    return sameTurn(kind);
  }
  function sameTurn(kind) {
    const turn = turns[kind] || 0;
    return () => turn !== (turns[kind] || 0);  // true once a newer request of the kind began
  }

  async function guarded(action) {
    try {
      return await action();
    } catch (error) {
      if (error instanceof NeedKey) toast(error.message);
      else toast(`${t("error")}: ${error.message}`, true);
      return undefined;
    }
  }

  // -- start -------------------------------------------------------------------------------
  async function start() {
    translatePage();
    fillSelect($("[data-testid=filter-kind]"), KINDS, "kinds");
    fillSelect($("[data-testid=filter-status]"), STATUSES, "statuses", "active");
    $("[data-testid=key-form]").addEventListener("submit", (event) => {
      event.preventDefault();
      state.key = event.target.key.value.trim();
      sessionStorage.setItem("engram.key", state.key);
      event.target.hidden = true;
      boot();
    });
    document.querySelectorAll("[data-tab]").forEach((button) => button.addEventListener("click", () => showTab(button.dataset.tab)));
    $("[data-testid=filters]").addEventListener("submit", (event) => { event.preventDefault(); loadList(true); });
    $("[data-testid=more]").addEventListener("click", () => loadList(false));
    $("[data-testid=search-form]").addEventListener("submit", (event) => { event.preventDefault(); runSearch(); });
    $("[data-testid=namespace]").addEventListener("change", (event) => {
      state.namespace = JSON.parse(event.target.value);
      refresh();
    });
    $("[data-testid=nested]").addEventListener("change", (event) => { state.nested = event.target.checked; refresh(); });
    $("[data-testid=close-detail]").addEventListener("click", closeDetail);
    await boot();
  }

  async function boot() {
    const me = await guarded(() => api("GET", "/v1/me"));
    if (!me) return;
    $(".toast").hidden = true;
    state.me = me;
    $("[data-testid=tenant]").textContent = `${t("tenant")}: ${me.tenant}${me.single_tenant ? ` (${t("single")})` : ""}`;
    const spec = await guarded(() => api("GET", "/openapi.json"));
    state.paths = new Set(Object.keys((spec && spec.paths) || {}));
    showPanels();
    await loadNamespaces();
    await loadList(true);
  }

  function fillSelect(select, values, labels, chosen) {
    select.replaceChildren(el("option", { value: "", text: t("any") }),
      ...values.map((value) => el("option", { value, text: t(`${labels}.${value}`), selected: value === chosen })));
  }

  async function loadNamespaces() {
    const found = await guarded(() => api("GET", "/v1/namespaces"));
    const select = $("[data-testid=namespace]");
    const namespaces = (found ? found.items : []).filter((ns) => ns.length);
    const order = { users: 0, agents: 1, orgs: 2 };
    namespaces.sort((a, b) => ((order[a[0]] ?? 3) - (order[b[0]] ?? 3)) || a.join("/").localeCompare(b.join("/")));
    state.namespaces = namespaces;
    select.replaceChildren(el("option", { value: "[]", text: t("root") }),
      ...namespaces.map((ns) => el("option", { value: JSON.stringify(ns), text: ns.join(" / ") })));
    const current = JSON.stringify(state.namespace);
    if ([...select.options].some((option) => option.value === current)) select.value = current;
    else { state.namespace = []; select.value = "[]"; }
  }

  function refresh() {
    closeDetail();
    loadList(true);
    if (!$("#tab-search").hidden && $("[data-testid=search-input]").value.trim()) runSearch();
  }

  function showTab(name) {
    document.querySelectorAll("[data-tab]").forEach((button) => button.classList.toggle("active", button.dataset.tab === name));
    document.querySelectorAll(".tab").forEach((section) => { section.hidden = section.id !== `tab-${name}`; });
    const panel = state.panels.find((p) => p.id === name);
    if (panel) renderPanel(panel);
  }

  // -- the list ----------------------------------------------------------------------------
  function listQuery() {
    const form = $("[data-testid=filters]");
    const tags = form.tags.value.split(/[,，]/).map((tag) => tag.trim()).filter(Boolean);
    const day = (value, end) => (value ? new Date(`${value}T${end ? "23:59:59.999" : "00:00:00"}`).toISOString() : undefined);
    return { ...scopeQuery(), ...viewQuery(), kind: form.kind.value || undefined,
             status: form.status.value ? [form.status.value] : STATUSES, tag: tags,
             created_after: day(form.after.value, false), created_before: day(form.before.value, true),
             include_descendants: state.nested || undefined, limit: PAGE, offset: state.offset };
  }

  async function loadList(fromStart) {
    if (fromStart) state.offset = 0;
    const stale = fromStart ? newTurn("list") : sameTurn("list");  // "more" continues the same list
    const atRoot = !state.namespace.length && !state.nested;
    if (fromStart) await showOverview(atRoot, stale);
    if (stale()) return;
    const page = await guarded(() => api("GET", "/v1/memories", { query: listQuery() }));
    if (!page || stale()) return;
    const box = $("[data-testid=list]");
    if (fromStart) box.replaceChildren();
    box.append(...page.items.map(memoryRow));
    if (!box.children.length && !atRoot) box.append(el("p", { class: "empty", "data-testid": "empty", text: t("noMemories") }));
    state.offset = page.next_offset || 0;
    $("[data-testid=more]").hidden = page.next_offset === null;
  }

  // The first screen (the whole tenant, no scope picked): its users, agents and orgs, and what happened lately.
  async function showOverview(show, stale) {
    const box = $("[data-testid=overview]");
    box.hidden = !show;
    if (!show) return;
    // changes and approvals (recalls left out: a few searches would push them below the fold) …
    const recent = await guarded(() => api("GET", "/v1/audit", { query: { newest_first: "true", limit: 15,
                                                                          exclude: "recall", ...viewQuery() } }));
    // … and the latest recalls, one line each, with what they recalled
    const recalls = await guarded(() => api("GET", "/v1/recalls", { query: { limit: 5, ...viewQuery() } }));
    if (stale()) return;
    const groups = [["users", "users"], ["agents", "agents"], ["orgs", "orgs"]];
    const pick = (ns) => () => {
      const select = $("[data-testid=namespace]");
      select.value = JSON.stringify(ns);
      select.dispatchEvent(new Event("change"));
    };
    const named = (kind) => state.namespaces.filter((ns) => ns[0] === kind);
    const others = state.namespaces.filter((ns) => !groups.some(([kind]) => ns[0] === kind));
    const scopeList = (title, list, testid) => (list.length ? el("div", { class: "group", "data-testid": testid },
      el("h3", { text: title }), el("div", { class: "picks" }, list.map((ns) => el("button", {
        type: "button", class: "pick", "data-testid": "pick-scope", onclick: pick(ns),
        text: ns[0] in { users: 1, agents: 1, orgs: 1 } && ns.length === 2 ? ns[1] : ns.join(" / ") })))) : null);
    const events = recent ? recent.items : [];
    box.replaceChildren(...[
      el("h2", { text: t("overview") }),
      state.namespaces.length ? el("p", { class: "hint", text: t("pickScope") }) : null,
      ...groups.map(([kind, title]) => scopeList(t(title), named(kind), `overview-${kind}`)),
      scopeList(t("others"), others, "overview-others"),
      el("h3", { text: t("recent") }),
      events.length ? el("ul", { class: "audit", "data-testid": "activity" }, events.map((event) => el("li", {
        "data-operation": event.operation },
        el("span", { class: "when", text: when(event.at) }), chip(opLabel(event.operation), "op"),
        el("span", { text: `${t("by")} ${actorLabel(event.actor)}` }),
        event.namespace && event.namespace.length ? el("button", { type: "button", class: "link ns",
          text: event.namespace.join(" / "), onclick: pick(event.namespace) }) : null,
        event.record_id && event.operation !== "purge" ? el("button", { type: "button", class: "link",
          "data-testid": "activity-open", text: event.record_id.slice(0, 12), onclick: () => openMemory(event.record_id) }) : null,
        event.detail.reason ? el("span", { class: "reason", text: `${t("why")}: ${reasonLabel(event.detail.reason)}` }) : null)))
        : el("p", { class: "empty", text: t("noActivity") }),
      el("h3", { text: t("recentRecalls") }),
      recalls && recalls.items.length ? el("ul", { class: "audit", "data-testid": "recent-recalls" },
        recalls.items.map(recallLine)) : el("p", { class: "empty", text: t("noRecalls") }),
    ].filter(Boolean));
  }

  // One recall: when, by whom, how many memories, and each one's text (opens it).
  function recallLine(trace) {
    const recall = trace.recall;
    return el("li", { "data-testid": "recall", "data-recall": recall.id },
      el("span", { class: "when", text: when(recall.at) }), chip(opLabel("recall"), "op"),
      el("span", { text: `${t("by")} ${actorLabel(recall.actor)}` }),
      el("span", { class: "count", text: `${trace.memories.length} ${t("recalledMemories")}` }),
      recall.answer_id ? chip(`${t("answer")} ${recall.answer_id}`) : null,
      el("ul", { class: "recalled" }, trace.memories.map((m) => el("li", {},
        el("button", { type: "button", class: "link", "data-testid": "recalled-open", onclick: () => openMemory(m.id),
                       text: m.record ? m.record.content : m.id.slice(0, 12) })))));
  }

  function memoryRow(record) {
    return el("button", { type: "button", class: `row status-${record.status}`, "data-testid": "memory-row",
                          "data-id": record.id, onclick: () => openMemory(record.id) },
      el("span", { class: "content", text: record.content }),
      el("span", { class: "meta" }, chip(t(`kinds.${record.kind}`), "kind"), chip(t(`statuses.${record.status}`), record.status),
         chip(`v${record.version}`), el("span", { class: "when", text: when(record.created_at) }),
         record.namespace.length && state.nested ? el("span", { class: "ns", text: record.namespace.join("/") }) : null));
  }

  // -- search ------------------------------------------------------------------------------
  async function runSearch() {
    const query = $("[data-testid=search-input]").value.trim();
    if (!query) return;
    const body = { query, k: 20, scope: { namespace: state.namespace }, include_descendants: state.nested };
    const stale = newTurn("search");
    const found = await guarded(() => api("POST", "/v1/search", { query: viewQuery(), body }));
    if (!found || stale()) return;
    const box = $("[data-testid=hits]");
    box.replaceChildren(...found.hits.map(hitCard));
    if (!found.hits.length) box.append(el("p", { class: "empty", "data-testid": "empty", text: t("noHits") }));
  }

  function hitCard(hit) {
    const bars = SIGNALS.map((name) => {
      const value = hit.signals[name];
      return el("div", { class: "signal", "data-testid": `signal-${name}`, title: value.toFixed(3) },
        el("span", { class: "name", text: t(`signals.${name}`) }),
        el("span", { class: "bar" }, el("span", { class: "fill", style: `width:${Math.round(value * 100)}%` })),
        el("span", { class: "value", text: value.toFixed(2) }));
    });
    const row = memoryRow(hit.record);
    row.dataset.testid = "hit";
    row.prepend(el("span", { class: "score", "data-testid": "score", text: hit.score.toFixed(3) }));
    row.append(el("div", { class: "signals" }, bars));
    return row;
  }

  // -- one memory --------------------------------------------------------------------------
  async function openMemory(id) {
    const stale = newTurn("detail");
    const shown = viewQuery();
    const loaded = await guarded(() => Promise.all([
      api("GET", `/v1/memories/${encodeURIComponent(id)}`, { query: shown }),
      api("GET", `/v1/memories/${encodeURIComponent(id)}/history`, { query: shown }),
      api("GET", "/v1/audit", { query: { record_id: id, limit: 200, ...shown } }),
    ]));
    if (!loaded || stale()) return;
    const [record, history, audit] = loaded;
    state.open = record;
    const detail = $("[data-testid=detail]");
    detail.querySelector(".detail-body").replaceChildren(...renderDetail(record, history.items, audit.items).filter(Boolean));
    detail.hidden = false;
    document.body.classList.add("detail-open");
  }

  function closeDetail() {
    newTurn("detail");  // a detail still loading does not open after it was closed
    $("[data-testid=detail]").hidden = true;
    document.body.classList.remove("detail-open");
    state.open = null;
  }

  function renderDetail(record, versions, audit) {
    const recalls = audit.filter((event) => event.operation === "recall");
    const changes = audit.filter((event) => event.operation !== "recall");
    return [
      el("p", { class: "big", "data-testid": "detail-content", text: record.content }),
      el("div", { class: "meta" }, chip(t(`kinds.${record.kind}`), "kind"),
         el("span", { class: `chip ${record.status}`, "data-testid": "detail-status", text: t(`statuses.${record.status}`) }),
         chip(`v${record.version}`), el("code", { class: "id", "data-testid": "detail-id", text: record.id })),
      piiNote(record),
      actions(record),
      el("h3", { text: t("source") }), sourceBlock(record),
      el("h3", { text: t("versions") }), versionList(versions),
      el("h3", { text: t("usedBy") }), recallList(recalls),
      el("h3", { text: t("audit") }), auditList(changes),
      el("h3", { text: t("fields") }), fieldTable(record),
    ];
  }

  function piiNote(record) {
    const encrypted = record.metadata.pii_encrypted;
    const held = Array.isArray(encrypted) ? encrypted.length : Object.keys(encrypted || {}).length;
    const personal = record.sensitivity !== "normal" || /\[[A-Z_]+(#\d+)?\]/.test(record.content) || held;
    if (!personal) return null;
    // masked when written: the original was never stored, so there is nothing to reveal (and no button)
    if (!held) return el("div", { class: "pii", "data-testid": "pii-note" }, el("span", { text: t("maskedAtWrite") }));
    const note = el("div", { class: "pii", "data-testid": "pii-note" },
      el("span", { text: `${t("masked")} (${held} ${t("encrypted")})` }));
    const mayReveal = state.me && state.me.permissions.includes("reveal") && state.paths.has(REVEAL_PATH);
    if (!mayReveal) return note;
    const form = el("form", { class: "ask", hidden: true, "data-testid": "reveal-form" },
      el("input", { name: "reason", required: true, placeholder: t("reasonPrompt"), "data-testid": "reveal-reason" }),
      el("button", { type: "submit", "data-testid": "confirm-reveal", text: t("reveal") }));
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const path = REVEAL_PATH.replace("{record_id}", encodeURIComponent(record.id));
      const shown = await guarded(() => api("POST", path, { body: { reason: form.reason.value.trim() } }));
      if (!shown) return;
      $("[data-testid=detail-content]").textContent = shown.content;
      note.replaceChildren(el("span", { text: t("revealed") }));
    });
    note.append(" ", el("button", { type: "button", "data-testid": "reveal", text: t("reveal"),
                                    onclick: () => { form.hidden = false; form.reason.focus(); } }), form);
    return note;
  }

  function actions(record) {
    const bar = el("div", { class: "actions" });
    const ask = (label, withText, run) => {
      const form = el("form", { class: "ask", "data-testid": "action-form" },
        withText ? el("textarea", { name: "content", rows: 3, "data-testid": "edit-content" }) : null,
        el("input", { name: "reason", placeholder: t("reasonPrompt"), "data-testid": "reason-input" }),
        el("button", { type: "submit", "data-testid": "confirm-action", text: label }),
        el("button", { type: "button", text: t("cancel"), onclick: () => form.remove() }));
      if (withText) form.content.value = record.content;
      form.addEventListener("submit", async (event) => {
        event.preventDefault();
        const done = await guarded(() => run(form.reason.value.trim() || undefined, withText ? form.content.value : undefined));
        if (done) { toast(done); await Promise.all([openMemory(record.id), loadList(true)]); }
      });
      bar.querySelector("form")?.remove();
      bar.append(form);
      (form.content || form.reason).focus();
    };
    const path = `/v1/memories/${encodeURIComponent(record.id)}`;
    if (record.status === "active") {
      bar.append(el("button", { type: "button", "data-testid": "edit", text: t("edit"), onclick: () => ask(t("save"), true,
        async (reason, content) => { await api("PATCH", path, { body: { content, reason, expected_version: record.version } }); return t("saved"); }) }));
      bar.append(el("button", { type: "button", class: "danger", "data-testid": "forget", text: t("forget"), onclick: () => ask(t("forget"), false,
        async (reason) => { await api("DELETE", path, { query: { reason } }); return t("forgotten"); }) }));
    } else {
      bar.append(el("button", { type: "button", "data-testid": "restore", text: t("restore"), onclick: () => ask(t("restore"), false,
        async (reason) => { await api("POST", `${path}/restore`, { body: { reason } }); return t("restored"); }) }));
    }
    return bar;
  }

  function sourceBlock(record) {
    const s = record.source || {};
    const rows = [["thread", s.thread_id], ["message", s.message_id], ["actor", actorLabel(s.actor)], ["replyTo", s.reply_to],
                  ["supersedes", record.supersedes], ["supersededBy", record.superseded_by]].filter(([, value]) => value);
    if (!rows.some(([name]) => name === "thread" || name === "message")) rows.push(["", t("noSource")]);
    return el("dl", { class: "source", "data-testid": "source" },
      rows.map(([name, value]) => [el("dt", { text: name ? t(name) : "" }), el("dd", { text: value })]));
  }

  function versionList(versions) {
    const newestFirst = [...versions].reverse();
    return el("ol", { class: "versions", "data-testid": "versions", reversed: true }, newestFirst.map((version, index) => {
      const previous = newestFirst[index + 1];
      const before = previous && previous.record ? previous.record.content : "";
      const after = version.record ? version.record.content : "";
      return el("li", { "data-testid": "version", "data-operation": version.operation },
        el("div", { class: "meta" }, chip(`v${version.version}`), chip(opLabel(version.operation), "op"),
           el("span", { class: "when", text: when(version.at) }), el("span", { text: `${t("by")} ${actorLabel(version.actor)}` }),
           version.reason ? el("span", { class: "reason", "data-testid": "version-reason", text: `${t("why")}: ${reasonLabel(version.reason)}` }) : null,
           version.record ? chip(t(`statuses.${version.record.status}`), version.record.status) : null),
        el("p", { class: "diff", "data-testid": "diff" }, previous ? diff(before, after) : after));
    }));
  }

  function recallList(recalls) {
    if (!recalls.length) return el("p", { class: "empty", "data-testid": "recalls", text: t("neverUsed") });
    return el("ul", { class: "recalls", "data-testid": "recalls" }, recalls.map((event) => el("li", {},
      el("span", { class: "when", text: when(event.at) }),
      event.detail.answer_id ? el("span", { text: `${t("answer")} ${event.detail.answer_id}` }) : null,
      event.detail.thread_id ? el("span", { text: `${t("thread")} ${event.detail.thread_id}` }) : null,
      el("span", { text: `${t("by")} ${actorLabel(event.actor)}` }),
      event.detail.score !== undefined ? chip(`${t("score")} ${Number(event.detail.score).toFixed(2)}`) : null)));
  }

  function auditList(events) {
    return el("ul", { class: "audit", "data-testid": "audit" }, events.map((event) => el("li", { "data-operation": event.operation },
      el("span", { class: "when", text: when(event.at) }), chip(opLabel(event.operation), "op"),
      el("span", { text: `${t("by")} ${actorLabel(event.actor)}` }),
      event.version ? chip(`v${event.version}`) : null,
      event.detail.reason ? el("span", { class: "reason", text: `${t("why")}: ${reasonLabel(event.detail.reason)}` }) : null)));
  }

  function fieldTable(record) {
    const skip = new Set(["content", "source"]);
    return el("table", { class: "fields" }, Object.entries(record).filter(([name]) => !skip.has(name)).map(([name, value]) =>
      el("tr", {}, el("th", { text: name }),
        el("td", { text: value === null ? "" : typeof value === "object" ? JSON.stringify(value) : String(value) }))));
  }

  // A word diff (CJK character by character): what the new version removed and added.
  function diff(before, after) {
    const split = (text) => text.match(/[\u3400-\u9fff\uf900-\ufaff]|[\p{L}\p{N}_]+|\s+|[^\p{L}\p{N}_\s]/gu) || [];
    const a = split(before), b = split(after);
    if (a.length * b.length > 250000) return [el("del", { text: before }), el("ins", { text: after })];
    const table = Array.from({ length: a.length + 1 }, () => new Uint16Array(b.length + 1));
    for (let i = a.length - 1; i >= 0; i--) {
      for (let j = b.length - 1; j >= 0; j--) {
        table[i][j] = a[i] === b[j] ? table[i + 1][j + 1] + 1 : Math.max(table[i + 1][j], table[i][j + 1]);
      }
    }
    const out = [];
    const push = (tag, text) => {
      const last = out[out.length - 1];
      if (last && last.tag === tag) last.text += text; else out.push({ tag, text });
    };
    let i = 0, j = 0;
    while (i < a.length || j < b.length) {
      if (i < a.length && j < b.length && a[i] === b[j]) { push("span", a[i]); i++; j++; }
      else if (i < a.length && (j >= b.length || table[i + 1][j] >= table[i][j + 1])) { push("del", a[i]); i++; }
      else { push("ins", b[j]); j++; }
    }
    return out.map((part) => el(part.tag, { text: part.text }));
  }

  // -- panels offered by the server (approvals, write accuracy, past conversations …) -------
  // A panel is shown only when the server's OpenAPI spec has its path (and, if it names
  // one, the key has its permission). Register one with
  // engram.registerPanel({id, path, permission?, title: {en, zh}, render(container, ui)}).
  function registerPanel(panel) {
    state.panels.push(panel);
    if (state.paths.size) showPanels();
  }

  function showPanels() {
    const tabs = $("[data-testid=tabs]");
    for (const panel of state.panels) {
      const allowed = !panel.permission || (state.me && state.me.permissions.includes(panel.permission));
      const offered = state.paths.has(panel.path) && allowed;
      let button = tabs.querySelector(`[data-tab="${panel.id}"]`);
      if (offered && !button) {
        tabs.append(el("button", { type: "button", "data-tab": panel.id, "data-testid": `panel-${panel.id}`,
                                   text: panel.title[lang] || panel.title.en, onclick: () => showTab(panel.id) }));
        $("main").append(el("section", { id: `tab-${panel.id}`, class: "tab", hidden: true, "data-testid": `tab-${panel.id}` }));
      } else if (!offered && button) {
        button.remove();
        document.getElementById(`tab-${panel.id}`)?.remove();
      }
    }
  }

  async function renderPanel(panel) {
    const box = document.getElementById(`tab-${panel.id}`);
    await guarded(() => panel.render(box, { api, scopeQuery, viewQuery, el, t, lang, openMemory, when, chip, toast,
                                            guarded, opLabel, actorLabel, reasonLabel, me: state.me,
                                            rerender: () => renderPanel(panel), refreshList: () => loadList(true) }));
  }

  return { start, registerPanel, api, t, lang, el };
})();

window.engram = engram;
document.addEventListener("DOMContentLoaded", () => engram.start());
