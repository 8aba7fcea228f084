// Panels that appear only when the server offers their endpoint (the page reads
// /openapi.json) and the key has the permission they name (GET /v1/me):
//
// - approvals (GET /v1/approvals, permission "review"): approve, edit then approve, or
//   reject a held write, each with a reason (audited with the key);
// - write accuracy (GET /v1/quality/samples, "review"): queue a sample of recent writes
//   and judge each one (correct, wrong, should not be stored) with a note;
// - past conversations (GET /v1/threads): the scope's threads, each opening its turns.
//
// Another feature adds a panel with a script of its own after this one in index.html:
//
//   engram.registerPanel({
//     id: "mine", path: "/v1/mine", permission: null, title: { en: "Mine", zh: "我的" },
//     async render(container, ui) { const page = await ui.api("GET", "/v1/mine", { query: ui.scopeQuery() }); … },
//   });
"use strict";
(() => {
  const text = window.ENGRAM_TEXT;
  const title = (id) => ({ en: text.en.panels[id], zh: text.zh.panels[id] });

  function reasonForm(ui, { withContent, content, buttons }) {
    const form = ui.el("form", { class: "ask", "data-testid": "decide-form" },
      withContent ? ui.el("textarea", { name: "content", rows: 2, "data-testid": "decide-content" }) : null,
      ui.el("input", { name: "reason", placeholder: ui.t("reasonPrompt"), "data-testid": "decide-reason" }),
      buttons.map(([label, testid, run, cls]) => ui.el("button", { type: "button", class: cls, "data-testid": testid,
        text: label, onclick: async () => {
          const reason = form.reason.value.trim();
          if (!reason) { ui.toast(ui.t("reasonNeeded"), true); form.reason.focus(); return; }
          const done = await ui.guarded(() => run(reason, form.content ? form.content.value : undefined));
          if (done) { ui.toast(done); await ui.rerender(); ui.refreshList(); }
        } })));
    form.addEventListener("submit", (event) => event.preventDefault());
    if (withContent) form.content.value = content;
    return form;
  }

  async function approvals(container, ui) {
    const page = await ui.api("GET", "/v1/approvals", { query: ui.scopeQuery() });
    const items = page.items.map((pending) => {
      const path = `/v1/approvals/${encodeURIComponent(pending.id)}`;
      const proposed = pending.changes.map((change) => ui.opLabel(change.operation)).join(" + ");
      return ui.el("div", { class: "row card", "data-testid": "pending", "data-id": pending.id },
        ui.el("span", { class: "content", text: pending.content }),
        ui.el("span", { class: "meta" }, ui.chip(proposed, "op"), ui.chip(`${ui.t("rule")}: ${ui.reasonLabel(pending.rule)}`),
          ui.el("span", { text: `${ui.t("proposedBy")} ${ui.actorLabel(pending.actor)}` }),
          pending.namespace.length ? ui.el("span", { class: "ns", text: pending.namespace.join(" / ") }) : null,
          ui.el("span", { class: "when", text: `${ui.t("expires")} ${ui.when(pending.expires_at)}` })),
        pending.reason ? ui.el("p", { class: "reason", text: `${ui.t("why")}: ${ui.reasonLabel(pending.reason)}` }) : null,
        reasonForm(ui, { withContent: pending.changes.length === 1 && pending.changes[0].operation !== "forget",
                         content: pending.content, buttons: [
          [ui.t("approve"), "approve", async (reason, content) => {
            const edit = content !== undefined && content !== pending.content ? { content } : undefined;
            await ui.api("POST", `${path}/approve`, { body: { reason, edit } });
            return ui.t("approved");
          }],
          [ui.t("reject"), "reject", async (reason) => {
            await ui.api("POST", `${path}/reject`, { body: { reason } });
            return ui.t("rejected");
          }, "danger"],
        ] }));
    });
    container.replaceChildren(...items);
    if (!items.length) container.append(ui.el("p", { class: "empty", "data-testid": "panel-empty", text: ui.t("noPending") }));
  }

  async function samples(container, ui) {
    const page = await ui.api("GET", "/v1/quality/samples", { query: { ...ui.scopeQuery(), ...ui.viewQuery() } });
    const queue = ui.el("button", { type: "button", "data-testid": "queue-sample", text: ui.t("queueSample"),
      onclick: async () => {
        const queued = await ui.guarded(() => ui.api("POST", "/v1/quality/sample", {
          body: { scope: { namespace: ui.scopeQuery().namespace || [] }, n: 20 } }));
        if (queued) { ui.toast(`${queued.items.length} ${ui.t("queued")}`); await ui.rerender(); }
      } });
    const items = page.items.map((sample) => {
      const path = `/v1/quality/samples/${encodeURIComponent(sample.id)}`;
      const verdict = (name, cls) => [ui.t(`verdicts.${name}`), `verdict-${name}`, async (reason) => {
        await ui.api("POST", path, { body: { verdict: name, note: reason } });
        return ui.t("judged");
      }, cls];
      return ui.el("div", { class: "row card", "data-testid": "sample", "data-id": sample.id },
        ui.el("button", { type: "button", class: "content link", text: sample.content || "", "data-testid": "sample-open",
                          onclick: () => ui.openMemory(sample.record_id) }),
        ui.el("span", { class: "meta" }, ui.chip(`v${sample.version}`),
          ui.el("span", { text: `${ui.t("writtenBy")} ${ui.actorLabel(sample.actor)}` }),
          ui.el("span", { class: "when", text: ui.when(sample.written_at) }),
          sample.namespace.length ? ui.el("span", { class: "ns", text: sample.namespace.join(" / ") }) : null),
        reasonForm(ui, { withContent: false, buttons: [verdict("correct"), verdict("wrong", "danger"),
                                                      verdict("should_not_store", "danger")] }));
    });
    container.replaceChildren(ui.el("div", { class: "actions" }, queue), ...items);
    if (!items.length) container.append(ui.el("p", { class: "empty", "data-testid": "panel-empty", text: ui.t("noSamples") }));
  }

  async function conversations(container, ui) {
    const page = await ui.api("GET", "/v1/threads", { query: { ...ui.scopeQuery(), include_descendants: "true" } });
    const items = page.items.map((thread) => {
      const turns = ui.el("ol", { class: "turns", "data-testid": "turns", hidden: true });
      const open = async () => {
        if (!turns.hidden) { turns.hidden = true; return; }
        const found = await ui.guarded(() => ui.api("GET", `/v1/threads/${encodeURIComponent(thread.id)}/turns`,
          { query: { namespace: thread.namespace, limit: 500 } }));
        if (!found) return;
        turns.replaceChildren(...found.items.map((turn) => ui.el("li", { class: `turn role-${turn.role}`, "data-testid": "turn" },
          ui.el("span", { class: "who", text: turn.name || ui.t(`roles.${turn.role}`) }),
          ui.el("span", { class: "said", text: turn.content }),
          ui.el("span", { class: "when", text: ui.when(turn.at) }))));
        turns.hidden = false;
      };
      return ui.el("div", { class: "row card thread", "data-testid": "thread", "data-id": thread.id },
        ui.el("button", { type: "button", class: "content link", "data-testid": "thread-open", text: thread.id, onclick: open }),
        ui.el("span", { class: "meta" }, ui.chip(`${thread.turns} ${ui.t(thread.turns === 1 ? "turn" : "turns")}`),
          ui.el("span", { class: "when", text: `${ui.t("started")} ${ui.when(thread.started_at)}` }),
          ui.el("span", { class: "when", text: `${ui.t("lastTurn")} ${ui.when(thread.last_at)}` }),
          thread.namespace.length ? ui.el("span", { class: "ns", text: thread.namespace.join(" / ") }) : null,
          thread.episode_id ? ui.el("button", { type: "button", class: "link", "data-testid": "thread-episode",
            text: ui.t("episode"), onclick: () => ui.openMemory(thread.episode_id) }) : null),
        turns);
    });
    container.replaceChildren(...items);
    if (!items.length) container.append(ui.el("p", { class: "empty", "data-testid": "panel-empty", text: ui.t("noThreads") }));
  }

  engram.registerPanel({ id: "approvals", path: "/v1/approvals", permission: "review", title: title("approvals"),
                         render: approvals });
  engram.registerPanel({ id: "samples", path: "/v1/quality/samples", permission: "review", title: title("samples"),
                         render: samples });
  engram.registerPanel({ id: "conversations", path: "/v1/threads", permission: null, title: title("conversations"),
                         render: conversations });
})();
