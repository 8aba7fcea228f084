// Panels that appear only when the server offers their endpoint (the page reads
// /openapi.json). Each is a generic list of what the endpoint returns ({items: [...]})
// until its feature ships a richer render(): replace the entry, or register a new one
// from a script of its own added to index.html:
//
//   engram.registerPanel({
//     id: "approvals", path: "/v1/approvals", title: { en: "Approvals", zh: "待审批" },
//     async render(container, ui) { const page = await ui.api("GET", "/v1/approvals", { query: ui.scopeQuery() }); … },
//   });
"use strict";
(() => {
  function genericList(path) {
    return async function render(container, ui) {
      const page = await ui.api("GET", path, { query: { ...ui.scopeQuery(), ...ui.viewQuery() } });
      const items = (page && (page.items || page.results)) || [];
      container.replaceChildren(...items.map((item) => ui.el("div", { class: "row card", "data-testid": "panel-item" },
        ui.el("span", { class: "content", text: item.content || item.summary || item.text || item.id || "" }),
        ui.el("span", { class: "meta" }, Object.entries(item)
          .filter(([name, value]) => !["content", "summary", "text"].includes(name) && (typeof value !== "object" || value === null))
          .slice(0, 6).map(([name, value]) => ui.chip(`${name}: ${value}`))))));
      if (!items.length) container.append(ui.el("p", { class: "empty", text: ui.t("nothing") }));
    };
  }

  const text = window.ENGRAM_TEXT;
  // approvals and quality samples (write-accuracy samples): issue 14, for keys with the "review" permission;
  // past conversations: GET /v1/threads (issue 13; docs/EPISODES.md).
  for (const [id, path, permission] of [["approvals", "/v1/approvals", "review"], ["samples", "/v1/quality/samples", "review"],
                                        ["conversations", "/v1/threads", null]]) {
    engram.registerPanel({ id, path, permission, title: { en: text.en.panels[id], zh: text.zh.panels[id] },
                           render: genericList(path) });
  }
})();
