// The profile panel (GET /v1/profile): what context() always gives first about the picked user
// — pinned memories, constraints, identity, standing rules and preferences — best first, each with
// pin / unpin / let engram decide (PATCH /v1/memories/{id} {"pinned": true | false | null}).
"use strict";
(() => {
  const words = {
    en: { pinned: "pinned", auto: "chosen by engram", pin: "Pin", unpin: "Keep out", auto_: "Let engram decide",
          empty: "Nothing in this scope's profile yet.", changed: "Profile changed" },
    zh: { pinned: "已固定", auto: "由 engram 选择", pin: "固定", unpin: "移出画像", auto_: "交给 engram",
          empty: "这个范围还没有画像记忆。", changed: "画像已更新" },
  };

  async function profile(container, ui) {
    const say = words[ui.lang] || words.en;
    const page = await ui.api("GET", "/v1/profile", { query: { ...ui.scopeQuery(), ...ui.viewQuery() } });
    const pin = (record, value) => async () => {
      const done = await ui.guarded(() => ui.api("PATCH", `/v1/memories/${encodeURIComponent(record.id)}`,
        { query: { namespace: record.namespace }, body: { pinned: value } }));
      if (done) { ui.toast(say.changed); await ui.rerender(); ui.refreshList(); }
    };
    const items = page.items.map((record) => ui.el("div", { class: "row card", "data-testid": "profile-row",
                                                           "data-id": record.id },
      ui.el("button", { type: "button", class: "content link", text: record.content, "data-testid": "profile-open",
                        onclick: () => ui.openMemory(record.id) }),
      ui.el("span", { class: "meta" }, ui.chip(ui.t(`kinds.${record.kind}`) || record.kind),
        ui.chip(record.pinned ? say.pinned : say.auto),
        record.namespace.length ? ui.el("span", { class: "ns", text: record.namespace.join(" / ") }) : null),
      ui.el("span", { class: "actions" },
        record.pinned ? null : ui.el("button", { type: "button", "data-testid": "profile-pin", text: say.pin,
                                                  onclick: pin(record, true) }),
        ui.el("button", { type: "button", class: "danger", "data-testid": "profile-unpin", text: say.unpin,
                          onclick: pin(record, false) }),
        record.pinned === null ? null : ui.el("button", { type: "button", "data-testid": "profile-auto",
                                                         text: say.auto_, onclick: pin(record, null) }))));
    container.replaceChildren(...items);
    if (!items.length) container.append(ui.el("p", { class: "empty", "data-testid": "panel-empty", text: say.empty }));
  }

  engram.registerPanel({ id: "profile", path: "/v1/profile", permission: null,
                         title: { en: "Profile", zh: "用户画像" }, render: profile });
})();
