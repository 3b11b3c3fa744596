// The dashboard's one script (an ES module, loaded from this origin: the CSP allows no inline
// script). Progressive enhancement only: every page works without it.
// - copy buttons (data-copy="ID"), confirmations (form[data-confirm]);
// - local times and countdowns (time[datetime], [data-countdown]);
// - the jobs list refreshing itself (table[data-live-jobs]), built with textContent, never HTML.

const $$ = (sel, root = document) => Array.from(root.querySelectorAll(sel));

function copyButtons() {
  for (const button of $$("button[data-copy]")) {
    button.addEventListener("click", async () => {
      const text = document.getElementById(button.dataset.copy)?.textContent ?? "";
      try {
        await navigator.clipboard.writeText(text);
        button.textContent = "Copied";
      } catch {
        const range = document.createRange();
        range.selectNodeContents(document.getElementById(button.dataset.copy));
        const selection = window.getSelection();
        selection.removeAllRanges();
        selection.addRange(range);
        button.textContent = "Selected: press Ctrl+C";
      }
    });
  }
}

function confirmations() {
  for (const form of $$("form[data-confirm]")) {
    form.addEventListener("submit", (event) => {
      if (!window.confirm(form.dataset.confirm)) event.preventDefault();
    });
  }
}

function left(ms) {
  if (ms <= 0) return "expired";
  const s = Math.floor(ms / 1000);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  return h > 0 ? `${h} h ${m} min` : m > 0 ? `${m} min ${s % 60} s` : `${s} s`;
}

function clocks() {
  const tick = () => {
    for (const el of $$("[data-countdown]")) el.textContent = left(Date.parse(el.dataset.countdown) - Date.now());
  };
  tick();
  if ($$("[data-countdown]").length) setInterval(tick, 1000);
  for (const el of $$("time[datetime]")) {
    const d = new Date(el.getAttribute("datetime"));
    if (!Number.isNaN(d.getTime())) {
      el.title = el.textContent;
      el.textContent = d.toLocaleString();
    }
  }
}

function cell(text, child) {
  const td = document.createElement("td");
  if (child) td.append(child);
  else td.textContent = text;
  return td;
}

function jobRow(job) {
  const tr = document.createElement("tr");
  tr.dataset.job = job.id;
  const link = document.createElement("a");
  link.href = `/dashboard/jobs/${encodeURIComponent(job.id)}`;
  link.textContent = job.id;
  const badge = document.createElement("span");
  badge.className = `badge ${job.status === "succeeded" ? "ok" : job.status === "failed" ? "bad" : job.status === "canceled" ? "muted" : "warn"}`;
  badge.textContent = job.status;
  const status = document.createElement("span");
  status.append(badge);
  if (job.error) {
    const code = document.createElement("code");
    code.textContent = job.error;
    status.append(" ", code);
  }
  const created = document.createElement("time");
  created.dateTime = job.created_at;
  created.textContent = new Date(job.created_at).toLocaleString();
  tr.append(cell("", link), cell(job.operation), cell("", status), cell(job.inputs), cell("", created));
  return tr;
}

function liveJobs() {
  const table = document.querySelector("table[data-live-jobs]");
  if (!table) return;
  const status = document.querySelector("[data-live-status]");
  const refresh = async () => {
    try {
      const res = await fetch(table.dataset.liveJobs, { headers: { Accept: "application/json" }, credentials: "same-origin" });
      if (!res.ok) throw new Error(String(res.status));
      const { data } = await res.json();
      const body = table.tBodies[0];
      if (data.length === 0) {
        const tr = document.createElement("tr");
        const td = cell("No jobs match.");
        td.colSpan = 5;
        td.className = "muted";
        tr.append(td);
        body.replaceChildren(tr);
      } else body.replaceChildren(...data.map(jobRow));
      if (status) status.textContent = `Updated ${new Date().toLocaleTimeString()}.`;
    } catch {
      if (status) status.textContent = "Could not refresh; retrying.";
    }
  };
  setInterval(() => {
    if (!document.hidden) void refresh();
  }, 3000);
}

copyButtons();
confirmations();
clocks();
liveJobs();
